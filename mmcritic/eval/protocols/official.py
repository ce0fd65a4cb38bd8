"""The `official` protocol: each benchmark's own released prompt where it has one."""

from __future__ import annotations

POLICY: dict = {}
CRITIC: dict = {}
