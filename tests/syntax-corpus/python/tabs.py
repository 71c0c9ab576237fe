class Tabs:
	def method(self):
		if True:
			return 1

	def other(self):
		return 2


def mixed():
	return "tab"
