"""The database: engine, models, migrations and every row function."""
