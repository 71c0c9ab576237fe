// Package counts parses numbers; its tests' names say error, fail and panic.
package counts

import (
	"errors"
	"strconv"
	"strings"
)

// Parse reads a whole number.
func Parse(text string) (int, error) {
	if text == "" {
		return 0, errors.New("empty input")
	}
	return strconv.Atoi(strings.TrimSpace(text))
}
