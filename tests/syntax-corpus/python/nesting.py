class Outer:
    class Inner:
        class Deepest:
            def method(self):
                def local():
                    def local2():
                        return 1
                    return local2
                return local

        def inner_method(self):
            pass

    def outer_method(self):
        class LocalClass:
            def m(self):
                return [x for x in range(3) if x]
        return LocalClass


def top():
    square = lambda n: n * n
    gen = (lambda: (yield))
    return square(2), sorted([3, 1], key=lambda v: -v)


async def coroutine(session):
    async with session as s:
        async for item in s:
            await item


class Empty: pass


def one_liner(): return 42
