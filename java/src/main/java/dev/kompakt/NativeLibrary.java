package dev.kompakt;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.Locale;

/**
 * Loads kompakt's JNI library (libkompakt_jni.so) once per class loader, before the first native
 * call ({@link Native}'s static initializer calls {@link #load()}).
 *
 * <p>Where it comes from, in this order:
 *
 * <ol>
 *   <li>the file named by the system property {@value #PATH_PROPERTY}, or else by the
 *       environment variable {@value #PATH_ENV};
 *   <li>the library inside the jar, {@code /dev/kompakt/native/<os>-<arch>/<library>}, copied to
 *       a new temporary file (in {@value #TMPDIR_PROPERTY} if set, else {@code java.io.tmpdir}),
 *       loaded, then deleted (the loaded library stays mapped).
 * </ol>
 *
 * A platform without a library in the jar, or a library that does not load, is an
 * {@link UnsatisfiedLinkError} that names the platform and the override property; it is thrown
 * again, unchanged, by every later attempt.
 */
final class NativeLibrary {
    /** System property: the path of a libkompakt_jni to load instead of the jar's. */
    static final String PATH_PROPERTY = "kompakt.native.path";

    /** Environment variable: the same, when the property is not set. */
    static final String PATH_ENV = "KOMPAKT_JNI_LIB";

    /** System property: the folder for the temporary copy of the jar's library. */
    static final String TMPDIR_PROPERTY = "kompakt.native.tmpdir";

    private static final String NAME = "kompakt_jni";

    private static boolean loaded;
    private static UnsatisfiedLinkError failure;
    private static String source;

    private NativeLibrary() {}

    /**
     * Loads the library if it is not loaded yet; thread-safe.
     *
     * @throws UnsatisfiedLinkError if it cannot be found or loaded
     */
    static synchronized void load() {
        if (loaded) {
            return;
        }
        if (failure != null) {
            throw failure;
        }
        try {
            source = loadNow();
            loaded = true;
        } catch (UnsatisfiedLinkError e) {
            failure = e;
            throw e;
        }
    }

    /**
     * Where the loaded library came from (a path, or "jar:" and the resource), for diagnostics.
     *
     * @return its description, or null before it is loaded
     */
    static synchronized String source() {
        return source;
    }

    /**
     * This machine's platform as the jar names its folders: {@code linux-x86_64},
     * {@code linux-aarch64}, {@code darwin-aarch64}, {@code windows-x86_64}.
     */
    static String platform() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        String osName;
        if (os.startsWith("linux")) {
            osName = "linux";
        } else if (os.startsWith("mac") || os.startsWith("darwin")) {
            osName = "darwin";
        } else if (os.startsWith("windows")) {
            osName = "windows";
        } else {
            osName = os.replaceAll("[^a-z0-9]+", "");
        }
        String archName;
        switch (arch) {
            case "amd64":
            case "x86_64":
            case "x64":
                archName = "x86_64";
                break;
            case "aarch64":
            case "arm64":
                archName = "aarch64";
                break;
            default:
                archName = arch.replaceAll("[^a-z0-9_]+", "");
        }
        return osName + "-" + archName;
    }

    /** The jar resource that holds this platform's library. */
    static String resourceName() {
        return "/dev/kompakt/native/" + platform() + "/" + System.mapLibraryName(NAME);
    }

    private static String loadNow() {
        String named = System.getProperty(PATH_PROPERTY);
        String from = "system property " + PATH_PROPERTY;
        if (named == null || named.isEmpty()) {
            named = System.getenv(PATH_ENV);
            from = "environment variable " + PATH_ENV;
        }
        if (named != null && !named.isEmpty()) {
            Path path = Paths.get(named).toAbsolutePath();
            if (!Files.isRegularFile(path)) {
                throw new UnsatisfiedLinkError(
                        "kompakt: the " + from + " names " + path + ", which is not a file");
            }
            System.load(path.toString());
            return path.toString();
        }
        String resource = resourceName();
        try (InputStream in = NativeLibrary.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new UnsatisfiedLinkError("kompakt: this jar has no native library for the platform "
                        + platform() + " (no resource " + resource + "); build libkompakt_jni for it "
                        + "(cargo build -p kompakt-jni) and name it with -D" + PATH_PROPERTY + "=PATH");
            }
            return "jar:" + resource + " via " + extractAndLoad(in);
        } catch (IOException e) {
            UnsatisfiedLinkError error = new UnsatisfiedLinkError("kompakt: cannot copy the native library "
                    + resource + " out of the jar: " + e + " (set -D" + TMPDIR_PROPERTY
                    + "=DIR to a writable folder, or -D" + PATH_PROPERTY + "=PATH)");
            error.initCause(e);
            throw error;
        }
    }

    private static Path extractAndLoad(InputStream in) throws IOException {
        String dirName = System.getProperty(TMPDIR_PROPERTY);
        if (dirName == null || dirName.isEmpty()) {
            dirName = System.getProperty("java.io.tmpdir");
        }
        Path dir = Paths.get(dirName);
        Files.createDirectories(dir);
        String file = System.mapLibraryName(NAME);
        int dot = file.lastIndexOf('.');
        Path tmp = Files.createTempFile(dir, file.substring(0, dot) + "-", file.substring(dot));
        try {
            Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
            try {
                System.load(tmp.toAbsolutePath().toString());
            } catch (UnsatisfiedLinkError e) {
                UnsatisfiedLinkError error = new UnsatisfiedLinkError("kompakt: the native library for "
                        + platform() + " does not load from " + tmp + ": " + e.getMessage()
                        + " (a folder mounted noexec? set -D" + TMPDIR_PROPERTY + "=DIR, or -D"
                        + PATH_PROPERTY + "=PATH)");
                error.initCause(e);
                throw error;
            }
            return tmp;
        } finally {
            // Loaded (or failed): the mapping stays, the file goes. Windows keeps a loaded DLL
            // open, so there it goes when the JVM exits.
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException e) {
                tmp.toFile().deleteOnExit();
            }
        }
    }
}
