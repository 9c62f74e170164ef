from resolver.cli import main

main()
