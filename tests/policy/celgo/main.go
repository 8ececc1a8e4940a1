// Command celgo is the differential test's cel-go side: one case a line on
// stdin, {"expr": "...", "input": {"claims": {...}, "args": {...},
// "meta": {...}, "tool": "..."}}, one answer a line on stdout: REFUSED when
// cel-go's standard environment refuses the expression at compile (parse
// or check) time, ERROR when it evaluates to an error, else VALUE and the
// value in the tagged notation toolctx's side prints ({"int":"1"},
// {"uint":"1"}, {"double":1.5}, plain JSON for the rest).
//
// With -conformance DIR it prints the CEL specification's conformance
// cases instead (conformance.go).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
	"google.golang.org/protobuf/types/known/structpb"
)

type input struct {
	Claims map[string]any `json:"claims"`
	Args   map[string]any `json:"args"`
	Meta   map[string]any `json:"meta"`
	Tool   string         `json:"tool"`
}

type testCase struct {
	Expr  string `json:"expr"`
	Input input  `json:"input"`
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "-conformance" {
		if err := conformanceCases(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		return
	}
	env, err := cel.NewEnv(
		cel.Variable("claims", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("args", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("meta", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("tool", cel.StringType),
	)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		fmt.Fprintln(out, answer(env, in.Bytes()))
	}
}

// asStruct reads a JSON object as CEL's JSON mapping has it
// (google.protobuf.Struct: every number a double); absent is empty.
func asStruct(m map[string]any) (*structpb.Struct, error) {
	if m == nil {
		m = map[string]any{}
	}
	return structpb.NewStruct(m)
}

func answer(env *cel.Env, line []byte) string {
	var c testCase
	if err := json.Unmarshal(line, &c); err != nil {
		return "BADCASE"
	}
	ast, iss := env.Compile(c.Expr)
	if iss != nil && iss.Err() != nil {
		return "REFUSED " + strings.Join(strings.Fields(iss.Err().Error()), " ")
	}
	prg, err := env.Program(ast)
	if err != nil {
		return "REFUSED"
	}
	vars := map[string]any{"tool": c.Input.Tool}
	for name, m := range map[string]map[string]any{"claims": c.Input.Claims, "args": c.Input.Args, "meta": c.Input.Meta} {
		s, err := asStruct(m)
		if err != nil {
			return "BADCASE"
		}
		vars[name] = s
	}
	val, _, err := prg.Eval(vars)
	if err != nil || types.IsError(val) {
		return "ERROR"
	}
	text, ok := tagged(val)
	if !ok {
		return "UNKNOWN " + val.Type().TypeName()
	}
	return "VALUE " + text
}

func tagged(v ref.Val) (string, bool) {
	switch x := v.(type) {
	case types.Null:
		return "null", true
	case types.Bool:
		if x {
			return "true", true
		}
		return "false", true
	case types.Int:
		return `{"int":"` + strconv.FormatInt(int64(x), 10) + `"}`, true
	case types.Uint:
		return `{"uint":"` + strconv.FormatUint(uint64(x), 10) + `"}`, true
	case types.Double:
		return `{"double":` + strconv.FormatFloat(float64(x), 'g', -1, 64) + `}`, true
	case types.String:
		b, _ := json.Marshal(string(x))
		return string(b), true
	}
	switch v.Type().TypeName() {
	case "list":
		l := v.(traits.Lister)
		s := "["
		n := int64(l.Size().(types.Int))
		for i := int64(0); i < n; i++ {
			if i > 0 {
				s += ","
			}
			t, ok := tagged(l.Get(types.Int(i)))
			if !ok {
				return "", false
			}
			s += t
		}
		return s + "]", true
	case "map":
		m := v.(traits.Mapper)
		s := "{"
		it := m.Iterator()
		first := true
		for it.HasNext() == types.True {
			k := it.Next()
			kt, ok := tagged(k)
			if !ok {
				return "", false
			}
			vt, ok := tagged(m.Get(k))
			if !ok {
				return "", false
			}
			if !first {
				s += ","
			}
			first = false
			s += kt + ":" + vt
		}
		return s + "}", true
	}
	return "", false
}
