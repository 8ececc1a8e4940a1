package dev.toolctx.internal;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;

/** The core's native library that the jar carries for this platform, copied out to load it. */
final class NativeLibrary {
    private NativeLibrary() {}

    /** This platform as the jar names its folder ({@code linux-x86_64}). */
    static String platform() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        if (os.startsWith("linux")) os = "linux";
        else if (os.startsWith("mac")) os = "macos";
        else if (os.startsWith("windows")) os = "windows";
        if (arch.equals("amd64") || arch.equals("x86_64")) arch = "x86_64";
        else if (arch.equals("arm64")) arch = "aarch64";
        return os + "-" + arch;
    }

    /**
     * The library copied into a new private file (created exclusively under
     * a random name, owner-only on POSIX: never a shared, predictable path
     * another user could plant), or null when the jar has none for this
     * platform.
     */
    static Path extract() throws IOException {
        String file = System.mapLibraryName("toolctx");
        try (InputStream in = NativeLibrary.class.getResourceAsStream("/dev/toolctx/native/" + platform() + "/" + file)) {
            if (in == null) return null;
            Path out = Files.createTempFile("toolctx-", "-" + file);
            try {
                Files.copy(in, out, StandardCopyOption.REPLACE_EXISTING);
            } catch (IOException e) {
                Files.deleteIfExists(out);
                throw e;
            }
            return out;
        }
    }
}
