package toolctx

import (
	"encoding/json"
	"errors"
	"strconv"
	"testing"
)

// TestSettingsVectors runs tests/vectors/settings.json through Setting:
// each case's raw value as Go holds a decoded JSON value (nil, bool,
// float64, string, a slice or a map), the value read or the refusal.
func TestSettingsVectors(t *testing.T) {
	var file struct {
		Cases []struct {
			Name    string          `json:"name"`
			Setting string          `json:"setting"`
			Raw     json.RawMessage `json:"raw"`
			Expect  struct {
				Value   json.RawMessage `json:"value"`
				Error   string          `json:"error"`
				Message string          `json:"message"`
			} `json:"expect"`
		} `json:"cases"`
	}
	readVectors(t, "settings.json", "toolctx-settings", &file)
	passed, failed := 0, 0
	for _, c := range file.Cases {
		var value any
		if c.Raw != nil {
			if err := json.Unmarshal(c.Raw, &value); err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
		}
		got, err := Setting(c.Setting, value)
		ok := false
		var e *Error
		switch {
		case c.Expect.Error != "":
			ok = errors.As(err, &e) && e.Code == c.Expect.Error && e.Message == c.Expect.Message
		case err == nil:
			ok = sameSetting(c.Expect.Value, got)
		}
		if ok {
			passed++
		} else {
			failed++
			t.Errorf("%s: expected %s%s %s, got %q %v", c.Name, c.Expect.Value, c.Expect.Error, c.Expect.Message, got, err)
		}
	}
	t.Logf("%d passed, %d failed", passed, failed)
	if passed == 0 {
		t.Fatal("no settings case ran")
	}
}

// sameSetting compares the file's JSON value with the core's text form.
func sameSetting(want json.RawMessage, got string) bool {
	var w any
	if json.Unmarshal(want, &w) != nil {
		return false
	}
	switch w := w.(type) {
	case bool:
		return strconv.FormatBool(w) == got
	case float64:
		n, err := strconv.ParseFloat(got, 64)
		return err == nil && n == w
	case string:
		return w == got
	}
	return false
}
