import pytest
from cryptography.fernet import Fernet
from sqlalchemy import select

from resolver.store.db import session_scope
from resolver.store.models import Credential
from resolver.store.vault import Secret, Vault, VaultError, rotate_all, store_credential
from tests.support import procs


def test_first_key_encrypts_and_every_key_decrypts() -> None:
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    token_under_old = Vault([old]).encrypt("s3cret-value")
    both = Vault([new, old])
    assert both.decrypt(token_under_old).reveal() == "s3cret-value"
    assert Vault([new]).decrypt(both.encrypt("x-value")).reveal() == "x-value"
    with pytest.raises(VaultError):
        Vault([old]).decrypt(both.encrypt("y-value"))


def test_secrets_hide_in_reprs_and_errors() -> None:
    secret = Secret("hunter2-very-secret")
    assert "hunter2" not in repr(secret)
    assert "hunter2" not in str(secret)
    assert "hunter2" not in f"{[secret]}"
    vault = Vault([Fernet.generate_key().decode()])
    assert "Fernet" not in repr(vault)
    with pytest.raises(VaultError) as caught:
        vault.decrypt("not-a-token")
    assert "not-a-token" not in str(caught.value)


def test_keys_rotate_reencrypts_every_secret(resolver_env, monkeypatch) -> None:
    old_key = resolver_env.vars["RESOLVER_SECRET_KEYS"]
    with session_scope() as session:
        from resolver.store.accounts import add_user

        user = add_user(session, "ada")
        store_credential(
            session,
            Vault([old_key]),
            provider="github",
            kind="pat",
            secret="tok-123456",
            user_id=user.id,
            refresh="refresh-123456",
        )
    new_key = Fernet.generate_key().decode()
    env = resolver_env.child_env(RESOLVER_SECRET_KEYS=f"{new_key},{old_key}")
    done = procs.run(env, "-m", "resolver.cli", "keys", "rotate")
    assert done.returncode == 0, done.stderr
    assert "re-encrypted 1" in done.stdout
    with session_scope() as session:
        cred = session.scalars(select(Credential)).one()
        only_new = Vault([new_key])
        assert only_new.decrypt(cred.ciphertext).reveal() == "tok-123456"
        assert cred.refresh_ciphertext is not None
        assert only_new.decrypt(cred.refresh_ciphertext).reveal() == "refresh-123456"
        # Rotation is idempotent.
        assert rotate_all(session, Vault([new_key])) == 1
