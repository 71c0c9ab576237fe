# -*- coding: utf-8 -*-
"""Módulo con nombres no ASCII: 日本語."""


class Café:
    """Ünïcödé docstring."""

    def größe(self) -> str:
        return "ß"

    def 名前(self):
        return "名前"


def émoji():
    return "🎉🎉🎉"


λ = lambda x: x
