package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"cel.dev/expr"
	_ "cel.dev/expr/conformance/proto2" // the test files' messages, for Any
	_ "cel.dev/expr/conformance/proto3"
	"cel.dev/expr/conformance/test"
	"google.golang.org/protobuf/encoding/prototext"
)

// conformanceCases prints, one a line, every test of the CEL
// specification's simple conformance files in dir that could be in the
// policy subset: no bindings, no declarations, no container, macros on,
// an expected value or error. Each line is {"name", "expr", "input": {},
// "expect"}: the expected value in the tagged notation, "ERROR", or
// "UNREPRESENTABLE" (a value the subset has no form for). Files that do
// not parse are named on stderr and skipped.
func conformanceCases(dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.textproto"))
	if err != nil {
		return err
	}
	sort.Strings(files)
	out := json.NewEncoder(os.Stdout)
	out.SetEscapeHTML(false)
	for _, file := range files {
		text, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		var suite test.SimpleTestFile
		if err := prototext.Unmarshal(text, &suite); err != nil {
			fmt.Fprintf(os.Stderr, "skipped %s: %v\n", filepath.Base(file), err)
			continue
		}
		for _, section := range suite.GetSection() {
			for _, t := range section.GetTest() {
				if len(t.GetBindings()) > 0 || len(t.GetTypeEnv()) > 0 || t.GetContainer() != "" ||
					t.GetDisableMacros() || t.GetCheckOnly() {
					continue
				}
				var expect string
				switch {
				case t.GetEvalError() != nil || t.GetAnyEvalErrors() != nil:
					expect = "ERROR"
				case t.GetUnknown() != nil || t.GetAnyUnknowns() != nil:
					continue
				case t.GetValue() != nil:
					expect = tagValue(t.GetValue())
				case t.GetTypedResult() != nil:
					expect = tagValue(t.GetTypedResult().GetResult())
				default:
					expect = "true" // the files' default: bool_value true
				}
				name := suite.GetName() + "/" + section.GetName() + "/" + t.GetName()
				if err := out.Encode(map[string]any{
					"name": name, "expr": t.GetExpr(), "input": map[string]any{},
					"expect": expect, "unchecked": t.GetDisableCheck(),
				}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// tagValue writes a conformance value in the tagged notation.
func tagValue(v *expr.Value) string {
	switch k := v.GetKind().(type) {
	case *expr.Value_NullValue:
		return "null"
	case *expr.Value_BoolValue:
		return strconv.FormatBool(k.BoolValue)
	case *expr.Value_Int64Value:
		return `{"int":"` + strconv.FormatInt(k.Int64Value, 10) + `"}`
	case *expr.Value_Uint64Value:
		return `{"uint":"` + strconv.FormatUint(k.Uint64Value, 10) + `"}`
	case *expr.Value_DoubleValue:
		b, err := json.Marshal(k.DoubleValue)
		if err != nil {
			return "UNREPRESENTABLE"
		}
		return `{"double":` + string(b) + `}`
	case *expr.Value_StringValue:
		b, _ := json.Marshal(k.StringValue)
		return string(b)
	case *expr.Value_ListValue:
		s := "["
		for i, item := range k.ListValue.GetValues() {
			if i > 0 {
				s += ","
			}
			t := tagValue(item)
			if t == "UNREPRESENTABLE" {
				return t
			}
			s += t
		}
		return s + "]"
	}
	return "UNREPRESENTABLE"
}
