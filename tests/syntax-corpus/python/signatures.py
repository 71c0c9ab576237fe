def multi_line(
    first: int,
    second: str = "default",
    *args,
    keyword_only: bool = False,
    **kwargs,
) -> dict[str, int]:
    return {}


def defaults(a=(1, 2), b={"k": [1, 2]}, c=lambda: None):
    if a:
        for i in b:
            while c:
                try:
                    pass
                except Exception:
                    pass
                finally:
                    pass
    else:
        with open("x") as f:
            return f


class Generic(Base, metaclass=Meta):
    def method(self, value: "T") -> "T":
        match value:
            case 1:
                return value
            case _:
                return value


def after_string():
    s = """
    def not_a_function():
        pass
    """
    return s
