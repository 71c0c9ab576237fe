package ledger

import "testing"

func TestTotal(t *testing.T) {
	if got := Total([]int{1, 2, 3}); got != 6 {
		t.Errorf("Total([1 2 3]) = %d, want 6", got)
	}
}

func TestTotalEmpty(t *testing.T) {
	if got := Total(nil); got != 0 {
		t.Errorf("Total(nil) = %d, want 0", got)
	}
}

func TestLargest(t *testing.T) {
	t.Run("positive", func(t *testing.T) {
		if got := Largest([]int{3, 9, 4}); got != 9 {
			t.Fatalf("Largest = %d, want 9", got)
		}
	})
	t.Run("empty", func(t *testing.T) {
		if got := Largest(nil); got != 0 {
			t.Fatalf("Largest(nil) = %d, want 0", got)
		}
	})
}
