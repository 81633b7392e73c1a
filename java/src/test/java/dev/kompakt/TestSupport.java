package dev.kompakt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import net.openhft.hashing.LongHashFunction;
import org.junit.jupiter.api.Assumptions;

/** Data, environment and process helpers shared by the tests. */
public final class TestSupport {
    private TestSupport() {}

    /** Set by scripts/test.sh: tests that need the environment below fail instead of skipping. */
    public static final boolean REQUIRE_INTEROP = "1".equals(System.getenv("KOMPAKT_REQUIRE_INTEROP"));

    /**
     * A path from an environment variable, or the local default if it exists. Missing: the test
     * is skipped, or fails under KOMPAKT_REQUIRE_INTEROP=1.
     */
    public static Path requiredPath(String variable, String localDefault) {
        String value = System.getenv(variable);
        Path path = null;
        if (value != null && !value.isEmpty()) {
            path = Paths.get(value);
        } else if (!REQUIRE_INTEROP && localDefault != null && Files.exists(Paths.get(localDefault))) {
            path = Paths.get(localDefault);
        }
        if (path == null || !Files.exists(path)) {
            String why = variable + " is " + (value == null ? "not set" : "\"" + value + "\", which does not exist");
            if (REQUIRE_INTEROP) {
                fail(why + " (KOMPAKT_REQUIRE_INTEROP=1)");
            }
            Assumptions.abort(why);
        }
        return path;
    }

    public static Path goldenDir() {
        return requiredPath("KOMPAKT_GOLDEN_DIR", "/work/main/tests/golden");
    }

    public static Path kompaktBin() {
        return requiredPath("KOMPAKT_BIN", "/work/main/target/ci/kompakt");
    }

    public static Path pythonBin() {
        return requiredPath("KOMPAKT_PYTHON_BIN", "/work/main/.venv/bin/python");
    }

    /** The XXH3-64 (seed 0) of bytes, as the golden manifests give it, in 16 hex digits. */
    public static String xxh3(byte[] data) {
        return String.format("%016x", LongHashFunction.xx3().hashBytes(data));
    }

    /** Compressible text-like bytes: words from a small vocabulary, numbers, newlines. */
    public static byte[] text(int length, long seed) {
        String[] words = {"kompakt", "block", "stream", "spark", "shuffle", "the", "of", "and", "data", "file",
            "checksum", "zstd", "lz4", "row", "column", "value", "{\"id\":", "\"name\":", "}", "\n"};
        Random random = new Random(seed);
        StringBuilder sb = new StringBuilder(length + 32);
        while (sb.length() < length) {
            sb.append(words[random.nextInt(words.length)]).append(' ');
            if (random.nextInt(8) == 0) {
                sb.append(random.nextInt(100000)).append(' ');
            }
        }
        byte[] all = sb.toString().getBytes(StandardCharsets.UTF_8);
        byte[] out = new byte[length];
        System.arraycopy(all, 0, out, 0, length);
        return out;
    }

    /** Incompressible bytes. */
    public static byte[] noise(int length, long seed) {
        byte[] out = new byte[length];
        new Random(seed).nextBytes(out);
        return out;
    }

    public static byte[] readAll(InputStream in) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        in.transferTo(out);
        return out.toByteArray();
    }

    /** The result of a process. */
    public static final class Run {
        public final int exit;
        public final String stdout;
        public final String stderr;

        Run(int exit, String stdout, String stderr) {
            this.exit = exit;
            this.stdout = stdout;
            this.stderr = stderr;
        }
    }

    /** Runs a command (120 s at most) and returns its exit code and output. */
    public static Run run(List<String> command) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(new ArrayList<>(command));
        Path out = Files.createTempFile("kompakt-run", ".out");
        Path err = Files.createTempFile("kompakt-run", ".err");
        try {
            pb.redirectOutput(out.toFile()).redirectError(err.toFile());
            Process p = pb.start();
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                fail("timed out: " + command);
            }
            return new Run(p.exitValue(), Files.readString(out), Files.readString(err));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }

    /** Runs a command that must succeed. */
    public static Run runOk(List<String> command) throws IOException, InterruptedException {
        Run r = run(command);
        assertEquals(0, r.exit, () -> command + " failed:\n" + r.stdout + r.stderr);
        return r;
    }
}
