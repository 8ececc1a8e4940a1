package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"sort"
	"strings"
)

// readJSON decodes with every number kept as its text (json.Number), so
// an id of 12345678901234567890 or 1e400 is judged exactly.
func readJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("trailing data")
	}
	return v, nil
}

// jsonEq is JSON equality as the contract defines it: objects ignore
// member order, arrays keep it, numbers compare by exact value.
func jsonEq(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		kx, ok1 := numberKey(string(x))
		ky, ok2 := numberKey(string(y))
		return ok1 && ok2 && kx == ky
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEq(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !jsonEq(v, w) {
				return false
			}
		}
		return true
	default:
		return a == b
	}
}

var numberRE = regexp.MustCompile(`^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$`)

// numberKey is a JSON number's exact value as a key: sign, significant
// digits, and where the point stands (exponents of any size).
func numberKey(text string) (string, bool) {
	m := numberRE.FindStringSubmatch(text)
	if m == nil {
		return "", false
	}
	sign, whole, frac, exp := m[1], m[2], m[3], m[4]
	if exp == "" {
		exp = "0"
	}
	digits := whole + frac
	significant := strings.TrimLeft(digits, "0")
	if significant == "" {
		return "0", true
	}
	e, ok := new(big.Int).SetString(strings.TrimPrefix(exp, "+"), 10)
	if !ok {
		return "", false
	}
	point := new(big.Int).Add(big.NewInt(int64(len(whole)-(len(digits)-len(significant)))), e)
	return sign + "0." + strings.TrimRight(significant, "0") + "e" + point.String(), true
}

// show is v as JSON text, numbers as written, members sorted.
func show(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case json.Number:
		return string(x)
	case []any:
		out := "["
		for i, e := range x {
			if i > 0 {
				out += ","
			}
			out += show(e)
		}
		return out + "]"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := "{"
		for i, k := range keys {
			if i > 0 {
				out += ","
			}
			kb, _ := json.Marshal(k)
			out += string(kb) + ":" + show(x[k])
		}
		return out + "}"
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}
