package toolctx

import (
	"context"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// The core, built from crates/wasm-abi (ABI version 1): the verifier and
// the server helpers, each its own module so a verifier-only server loads
// the smaller one. Not in git: `go generate` in a checkout builds them into
// wasm/ (scripts/lib.sh build_go_wasm: cargo and wasm-opt).
//
//go:generate bash -c ". ../scripts/lib.sh && build_go_wasm"
var (
	//go:embed wasm/toolctx.wasm
	verifierWasm []byte
	//go:embed wasm/toolctx-helpers.wasm
	helpersWasm []byte
)

const abiVersion = 1

// engine is the one wazero runtime of the process: each module is compiled
// once (on first use) and instantiated as often as the pools need.
type engine struct {
	rt       wazero.Runtime
	verifier lazyModule
	helpers  lazyModule
}

type lazyModule struct {
	once     sync.Once
	compiled wazero.CompiledModule
	err      error
}

var shared = sync.OnceValue(func() *engine {
	ctx := context.Background()
	config := wazero.NewRuntimeConfig().WithCompilationCache(wazero.NewCompilationCache())
	return &engine{rt: wazero.NewRuntimeWithConfig(ctx, config)}
})

func (e *engine) compile(m *lazyModule, code []byte) (wazero.CompiledModule, error) {
	m.once.Do(func() {
		m.compiled, m.err = e.rt.CompileModule(context.Background(), code)
	})
	return m.compiled, m.err
}

// instance is one instantiated module: single-threaded, so a caller holds
// mu while it calls. An instance that trapped is dead and never called again.
type instance struct {
	mu    sync.Mutex
	mod   api.Module
	mem   api.Memory
	input api.Function
	fns   map[string]api.Function
	stack []uint64
	dead  bool
}

// errTrap is a call that trapped: the instance is dropped.
var errTrap = errors.New("toolctx: the core trapped")

func newInstance(code []byte, m *lazyModule) (*instance, error) {
	e := shared()
	compiled, err := e.compile(m, code)
	if err != nil {
		return nil, fmt.Errorf("toolctx: compiling the core: %w", err)
	}
	// An anonymous module: a runtime holds any number of them.
	mod, err := e.rt.InstantiateModule(context.Background(), compiled, wazero.NewModuleConfig().WithName(""))
	if err != nil {
		return nil, fmt.Errorf("toolctx: instantiating the core: %w", err)
	}
	in := &instance{mod: mod, mem: mod.Memory(), input: mod.ExportedFunction("toolctx_input"), fns: map[string]api.Function{}, stack: make([]uint64, 8)}
	for name := range compiled.ExportedFunctions() {
		in.fns[name] = mod.ExportedFunction(name)
	}
	if v, err := in.number("toolctx_version"); err != nil || v != abiVersion {
		in.close()
		return nil, fmt.Errorf("toolctx: the embedded core speaks ABI %d, this package %d", v, abiVersion)
	}
	return in, nil
}

func (in *instance) close() {
	in.dead = true
	_ = in.mod.Close(context.Background())
}

// invoke calls an export with the numbers in params; the results are in
// in.stack. A trap kills the instance.
func (in *instance) invoke(name string, params ...uint64) error {
	if in.dead {
		return errTrap
	}
	fn := in.fns[name]
	if fn == nil {
		return fmt.Errorf("toolctx: the core has no export %s", name)
	}
	copy(in.stack, params)
	if err := fn.CallWithStack(context.Background(), in.stack); err != nil {
		in.close()
		return fmt.Errorf("%w: %s: %v", errTrap, name, err)
	}
	return nil
}

func (in *instance) number(name string, params ...uint64) (int64, error) {
	if err := in.invoke(name, params...); err != nil {
		return 0, err
	}
	return int64(in.stack[0]), nil
}

// write puts the fields, each as a u32 little-endian length then its
// bytes, into the module's input buffer.
func (in *instance) write(fields ...[]byte) error {
	total := 0
	for _, f := range fields {
		total += 4 + len(f)
	}
	if err := in.invoke("toolctx_input", uint64(uint32(total))); err != nil {
		return err
	}
	ptr := uint32(in.stack[0])
	if total == 0 {
		return nil
	}
	buf, ok := in.mem.Read(ptr, uint32(total))
	if ptr == 0 || !ok {
		return fmt.Errorf("toolctx: the core has no room for %d input bytes", total)
	}
	at := 0
	for _, f := range fields {
		binary.LittleEndian.PutUint32(buf[at:], uint32(len(f)))
		at += 4 + copy(buf[at+4:], f)
	}
	return nil
}

// call writes the fields, calls the operation and answers its payload (a
// view of the module's memory, valid until the next call) or the core's
// error.
func (in *instance) call(name string, fields [][]byte, params ...uint64) ([]byte, error) {
	if err := in.write(fields...); err != nil {
		return nil, err
	}
	if err := in.invoke(name, params...); err != nil {
		return nil, err
	}
	packed := in.stack[0]
	out, ok := in.mem.Read(uint32(packed>>32), uint32(packed))
	if !ok || len(out) == 0 {
		in.close()
		return nil, fmt.Errorf("%w: %s answered outside its memory", errTrap, name)
	}
	switch out[0] {
	case '=':
		return out[1:], nil
	case '!':
		return nil, coreError(out[1:])
	}
	in.close()
	return nil, fmt.Errorf("%w: %s answered %q", errTrap, name, out[:1])
}

// text is call with the answer copied out as a string.
func (in *instance) text(name string, fields [][]byte, params ...uint64) (string, error) {
	out, err := in.call(name, fields, params...)
	return string(out), err
}

// list reads an answer made of fields.
func list(out []byte) ([]string, error) {
	var items []string
	for len(out) > 0 {
		if len(out) < 4 {
			return nil, errors.New("toolctx: a field of the core's answer is cut short")
		}
		n := binary.LittleEndian.Uint32(out)
		out = out[4:]
		if uint64(n) > uint64(len(out)) {
			return nil, errors.New("toolctx: a field of the core's answer runs past it")
		}
		items = append(items, string(out[:n]))
		out = out[n:]
	}
	return items, nil
}

// listOf is call with the answer read as fields.
func (in *instance) listOf(name string, fields [][]byte, params ...uint64) ([]string, error) {
	out, err := in.call(name, fields, params...)
	if err != nil {
		return nil, err
	}
	return list(out)
}

// single is one instance of a module shared under a mutex, made (again,
// after a trap) on first use.
type single struct {
	mu     sync.Mutex
	in     *instance
	code   []byte
	module func(*engine) *lazyModule
}

func withSingle[T any](s *single, f func(*instance) (T, error)) (T, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var zero T
	if s.in == nil || s.in.dead {
		in, err := newInstance(s.code, s.module(shared()))
		if err != nil {
			return zero, err
		}
		s.in = in
	}
	return f(s.in)
}
