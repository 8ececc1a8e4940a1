package toolctx

import (
	"math"
	"reflect"
	"strconv"
	"time"
)

// The raw kinds of the core's settings table (toolctx_setting's kind).
const (
	rawAbsent = iota
	rawFalse
	rawTrue
	rawNumber
	rawText
	rawOther
)

// Setting reads the user's value for a setting of the core's table
// (docs/CONTRACT.md, "Settings"): nil is not given; a bool, any integer or
// float (a time.Duration in milliseconds), a string; anything else is the
// wrong type. The answer is the value to use as the core writes it (true
// or false, decimal digits, the text), or the core's refusal (*Error:
// config_type, limit_out_of_range, config_placeholder, ...).
func Setting(name string, raw any) (string, error) {
	kind, number, text := rawSetting(raw)
	return withHelpers(func(in *instance) (string, error) {
		return in.text("toolctx_setting", [][]byte{[]byte(name), []byte(text)}, uint64(kind), math.Float64bits(number))
	})
}

// settingNumber is Setting for a numeric setting, as an int64.
func settingNumber(name string, raw any) (int64, error) {
	s, err := Setting(name, raw)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(s, 10, 64)
}

func rawSetting(raw any) (kind int, number float64, text string) {
	switch v := raw.(type) {
	case nil:
		return rawAbsent, 0, ""
	case bool:
		if v {
			return rawTrue, 0, ""
		}
		return rawFalse, 0, ""
	case string:
		return rawText, 0, v
	case time.Duration:
		return rawNumber, float64(v) / float64(time.Millisecond), ""
	}
	r := reflect.ValueOf(raw)
	switch r.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rawNumber, float64(r.Int()), ""
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return rawNumber, float64(r.Uint()), ""
	case reflect.Float32, reflect.Float64:
		return rawNumber, r.Float(), ""
	case reflect.Pointer:
		if r.IsNil() {
			return rawAbsent, 0, ""
		}
		return rawSetting(r.Elem().Interface())
	}
	return rawOther, 0, ""
}
