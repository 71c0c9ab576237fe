// Package ledger has two bugs, for the go test capture.
package ledger

func Total(xs []int) int {
	sum := 0
	for i := 1; i < len(xs); i++ {
		sum += xs[i]
	}
	return sum
}

func Largest(xs []int) int {
	best := xs[0]
	for _, x := range xs {
		if x > best {
			best = x
		}
	}
	return best
}
