"""[stand-in] A local GitHub for the demo: the REST API stand-in and a git server over HTTP.

Both come from the test suite (tests/support): they speak GitHub's wire format on loopback, so
the demo exercises the same App authentication, clone, push and pull-request calls as a real
installation. They are never used by the service itself.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from demo.repo import CALC, TEST
from integrations.github.standin.api import GitHubAPI
from integrations.standin.git_http import GitHttpServer, create_bare_repo

APP_ID = "1001"
INSTALLATION_ID = 1
REPO = "acme/calc"


@dataclass
class StandinGitHub:
    api: GitHubAPI
    git: GitHttpServer
    key_path: Path
    bare: Path

    def close(self) -> None:
        self.git.close()
        self.api.close()


def start_github(root: Path) -> StandinGitHub:
    """A GitHub App installation on `acme/calc`, whose add() subtracts."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    key_path = root / "app-private-key.pem"
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    key_path.chmod(0o600)
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    api = GitHubAPI(app_id=APP_ID, public_key=public.decode())
    api.add_installation(INSTALLATION_ID)
    git_root = root / "git"
    shutil.rmtree(git_root, ignore_errors=True)
    git = GitHttpServer(git_root, accepts=api.tokens.__contains__)
    bare = create_bare_repo(git.root, REPO, {"calc.py": CALC, "test_calc.py": TEST})
    api.add_repo(REPO, git.url_for(REPO), collaborators={"Codertocat": "write"}, bare=bare)
    return StandinGitHub(api, git, key_path, bare)
