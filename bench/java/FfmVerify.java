// The FFM side of the runtime measurement (bench/java.sh, not a test):
// the same verify loop as java/testkit's VerifyBench, on the native build
// of crates/wasm-abi (libtoolctx_wasm_abi.so) through java.lang.foreign
// (JDK 22+). Reads the exact ABI input VerifyBench wrote.
//
//   java --enable-native-access=ALL-UNNAMED FfmVerify.java LIB INPUT.bin [ITERATIONS]
import java.io.DataInputStream;
import java.io.FileInputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.Arrays;

public class FfmVerify {
    static MethodHandle input, output, configure, verify;

    public static void main(String[] args) throws Throwable {
        Linker linker = Linker.nativeLinker();
        SymbolLookup lib = SymbolLookup.libraryLookup(Path.of(args[0]), Arena.global());
        input = linker.downcallHandle(lib.find("toolctx_input_native").orElseThrow(), FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
        output = linker.downcallHandle(lib.find("toolctx_output_native").orElseThrow(), FunctionDescriptor.of(ValueLayout.JAVA_LONG));
        configure = linker.downcallHandle(lib.find("toolctx_configure").orElseThrow(), FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
        verify = linker.downcallHandle(lib.find("toolctx_verify").orElseThrow(), FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG));
        long now;
        byte[] cfg, in;
        try (DataInputStream d = new DataInputStream(new FileInputStream(args[1]))) {
            now = d.readLong();
            cfg = d.readNBytes(d.readInt());
            in = d.readNBytes(d.readInt());
        }
        int iterations = args.length > 2 ? Integer.parseInt(args[2]) : 50_000;
        write(cfg);
        byte[] said = read((long) configure.invokeExact(1, 0));
        if (said[0] != '=') throw new IllegalStateException(new String(said));
        write(in);
        byte[] first = read((long) verify.invokeExact(now));
        if (first.length < 2 || first[1] != 'a') throw new IllegalStateException("not accepted: " + new String(first));
        for (int i = 0; i < iterations; i++) once(in, now);
        long[] ns = new long[3];
        for (int r = 0; r < 3; r++) {
            long t = System.nanoTime();
            for (int i = 0; i < iterations; i++) once(in, now);
            ns[r] = (System.nanoTime() - t) / iterations;
        }
        Arrays.sort(ns);
        System.out.printf("ffm raw toolctx_verify: %d ns/call (median of 3 x %d; runs %s)%n", ns[1], iterations, Arrays.toString(ns));
    }

    static byte[] once(byte[] in, long now) throws Throwable {
        write(in);
        return read((long) verify.invokeExact(now));
    }

    static void write(byte[] bytes) throws Throwable {
        long ptr = (long) input.invokeExact(bytes.length);
        MemorySegment.ofAddress(ptr).reinterpret(bytes.length).copyFrom(MemorySegment.ofArray(bytes));
    }

    static byte[] read(long answer) throws Throwable {
        int len = (int) answer;
        long ptr = (long) output.invokeExact();
        return MemorySegment.ofAddress(ptr).reinterpret(len).toArray(ValueLayout.JAVA_BYTE);
    }
}
