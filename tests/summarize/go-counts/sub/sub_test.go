package sub

import "testing"

func TestSubErrorFree(t *testing.T) {}

func TestSubNested(t *testing.T) {
	t.Run("outer", func(t *testing.T) {
		t.Run("inner_error", func(t *testing.T) {})
		t.Run("inner_fail", func(t *testing.T) { t.Error("inner failed") })
	})
}
