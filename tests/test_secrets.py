"""Nothing key-like in committed cassettes, notebooks or examples; the scanner itself can fail."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PATTERNS = {
    "OpenAI-style key": re.compile(r"sk-[A-Za-z0-9_-]{20,}"),
    "bearer token": re.compile(r"Bearer\s+[A-Za-z0-9._~+/=-]{8,}"),
    "authorization header": re.compile(r"(?i)^\s*-?\s*['\"]?authorization['\"]?\s*:", re.M),
    "AWS access key": re.compile(r"AKIA[0-9A-Z]{16}"),
    "GitHub token": re.compile(r"gh[pousr]_[A-Za-z0-9]{20,}"),
    "Slack token": re.compile(r"xox[abprs]-[A-Za-z0-9-]{10,}"),
    "assigned API key": re.compile(
        r"(?i)api[_-]?key['\"]?\s*[:=]\s*['\"]?(?!\.\.\.|your|<)[A-Za-z0-9_\-]{16,}"
    ),
    "private key": re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
}


def find_secrets(text: str) -> list[str]:
    return [name for name, pat in PATTERNS.items() if pat.search(text)]


def scanned_files() -> list[Path]:
    files = [
        *ROOT.glob("cassettes/*.yaml"),
        *ROOT.glob("notebooks/*.ipynb"),
        *ROOT.glob("solutions/*.ipynb"),
        ROOT / ".env.example",
        ROOT / "README.md",
    ]
    return [f for f in files if f.exists()]


@pytest.mark.parametrize(
    "planted",
    [
        "sk-" + "proj-abcdefghijklmnopqrstuvwxyz0123",
        "Authorization: Bearer abc.def.ghi",
        "  authorization:\n  - xyz",
        "AKIA" + "ABCDEFGHIJKLMNOP",
        "ghp_" + "abcdefghijklmnopqrstuvwxyz012345",
        'api_key = "A1b2C3d4E5f6G7h8I9j0"',
    ],
)
def test_scanner_catches_planted_secrets(planted):
    assert find_secrets(f"some text\n{planted}\nmore"), planted


def test_scanner_accepts_placeholders():
    assert find_secrets("# OPENAI_API_KEY=...\napi_key=your-key-here\nBearer <token>") == []


@pytest.mark.parametrize("path", scanned_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_committed_files_hold_no_secrets(path):
    assert find_secrets(path.read_text(errors="replace")) == [], f"{path} holds something key-like"
