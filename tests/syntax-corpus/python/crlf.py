class WithCRLF:
    def method(self):
        return 1


def after():
    x = 1
    return x
