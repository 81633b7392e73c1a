package dev.kompakt;

import static dev.kompakt.TestSupport.noise;
import static dev.kompakt.TestSupport.readAll;
import static dev.kompakt.TestSupport.text;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Damaged, truncated, forged and fuzzed input: every decoder either succeeds or throws one of
 * kompakt's exceptions (damage as {@link CorruptDataException}); never another exception, an
 * Error or a crash.
 */
class HostileInputTest {
    @TempDir
    static Path tmp;

    /** A small file of several blocks: the file every truncation and bit flip starts from. */
    static byte[] smallFile() throws IOException {
        WriteOptions opts = WriteOptions.builder().codec("zstd:3").blockSize(64 << 10).threads(1).build();
        byte[] data = new byte[140_000];
        byte[] line = text(3000, 31);
        for (int i = 0; i < 139_000; i += line.length) {
            System.arraycopy(line, 0, data, i, Math.min(line.length, 139_000 - i));
        }
        System.arraycopy(noise(1000, 32), 0, data, 139_000, 1000);
        return Kompakt.compress(data, opts);
    }

    /** How each decoder answered, for the report of a failure. */
    enum Outcome { OK, KOMPAKT_EXCEPTION }

    /**
     * Decodes {@code file} with every API: Kompakt.decompress (array and direct buffer),
     * decompressedLength, KompaktInputStream (plain, concatenated, 3-byte reads of the input),
     * KompaktFile. Each must succeed or throw a KompaktException (or an InvalidOptionException);
     * {@code expected}, if not null, is the only exception class allowed.
     */
    static Map<String, Object> decodeEverywhere(byte[] file, Class<? extends Exception> expected) throws IOException {
        Map<String, Object> outcomes = new TreeMap<>();
        outcomes.put("decompress", attempt(expected, () -> Kompakt.decompress(file)));
        outcomes.put("decompressedLength", attempt(expected, () -> Kompakt.decompressedLength(file)));
        outcomes.put("decompressDirect", attempt(expected, () -> {
            ByteBuffer src = ByteBuffer.allocateDirect(Math.max(1, file.length)).put(file).flip();
            ByteBuffer dst = ByteBuffer.allocateDirect(1 << 20);
            return Kompakt.decompress(src, dst, null);
        }));
        outcomes.put("stream", attempt(expected, () -> {
            try (InputStream in = new KompaktInputStream(new ByteArrayInputStream(file))) {
                return readAll(in);
            }
        }));
        outcomes.put("concatenated", attempt(expected, () -> {
            try (InputStream in = KompaktInputStream.concatenated(new ThreeBytes(file), null)) {
                return readAll(in);
            }
        }));
        Path path = Files.write(tmp.resolve("hostile.kpk"), file);
        outcomes.put("file", attempt(expected, () -> {
            try (KompaktFile f = KompaktFile.open(path)) {
                int n = f.streamCount();
                for (int s = 0; s < n; s++) {
                    f.streamLength(s);
                    f.readFully(s);
                    f.read(s, 7, new byte[100], 0, 100);
                }
                f.metadata();
                f.kind();
                return n;
            }
        }));
        outcomes.put("fileStream", attempt(expected, () -> {
            try (InputStream in = KompaktInputStream.open(path, null)) {
                return readAll(in);
            }
        }));
        return outcomes;
    }

    interface Attempt {
        Object run() throws Exception;
    }

    static Object attempt(Class<? extends Exception> expected, Attempt a) {
        try {
            a.run();
            return Outcome.OK;
        } catch (KompaktException | InvalidOptionException e) {
            if (expected != null && !expected.isInstance(e)) {
                fail("expected " + expected.getSimpleName() + ", got " + e, e);
            }
            assertTrue(e.getMessage() != null && !e.getMessage().isEmpty(), "a message");
            return e.getClass().getSimpleName();
        } catch (Throwable e) {
            fail("not a kompakt exception: " + e, e);
            return null;
        }
    }

    /** An input stream that hands out at most 3 bytes per read. */
    static final class ThreeBytes extends ByteArrayInputStream {
        ThreeBytes(byte[] b) {
            super(b);
        }

        @Override
        public synchronized int read(byte[] b, int off, int len) {
            return super.read(b, off, Math.min(len, 3));
        }
    }

    @Test
    void truncatedAtEveryLengthIsCorrupt() throws IOException {
        byte[] file = smallFile();
        assertTrue(file.length < 8_000, "a small file: " + file.length);
        for (int n = 0; n < file.length; n++) {
            byte[] cut = java.util.Arrays.copyOf(file, n);
            int len = n;
            CorruptDataException e = assertThrows(CorruptDataException.class, () -> Kompakt.decompress(cut),
                    () -> "decompress, " + len + " of " + file.length + " bytes");
            assertEquals(ErrorKind.CORRUPT, e.kind());
            assertThrows(CorruptDataException.class, () -> {
                try (InputStream in = new KompaktInputStream(new ByteArrayInputStream(cut))) {
                    readAll(in);
                }
            }, () -> "stream, " + len + " of " + file.length + " bytes");
            if (n > 0) {
                assertThrows(CorruptDataException.class, () -> {
                    try (InputStream in = KompaktInputStream.concatenated(new ByteArrayInputStream(cut), null)) {
                        readAll(in);
                    }
                }, () -> "concatenated, " + len + " of " + file.length + " bytes");
            }
        }
    }

    @Test
    void everyFlippedByteIsCorrupt() throws IOException {
        byte[] file = smallFile();
        Random random = new Random(33);
        List<String> wrong = new ArrayList<>();
        for (int i = 0; i < file.length; i++) {
            byte[] bad = file.clone();
            bad[i] ^= (byte) (1 << random.nextInt(8));
            Object oneShot = attempt(null, () -> Kompakt.decompress(bad));
            Object stream = attempt(null, () -> {
                try (InputStream in = new KompaktInputStream(new ByteArrayInputStream(bad))) {
                    return readAll(in);
                }
            });
            if (!"CorruptDataException".equals(oneShot)) {
                wrong.add("decompress, byte " + i + ": " + oneShot);
            }
            if (!"CorruptDataException".equals(stream)) {
                wrong.add("stream, byte " + i + ": " + stream);
            }
        }
        assertTrue(wrong.isEmpty(), () -> "a flipped bit is not reported as corrupt data (" + file.length
                + "-byte file): " + wrong);
    }

    @Test
    void flippedBitsEverywhereFailCleanly() throws IOException {
        byte[] file = smallFile();
        Random random = new Random(34);
        for (int i = 0; i < 40; i++) {
            byte[] bad = file.clone();
            for (int k = 0; k < 1 + random.nextInt(4); k++) {
                int at = random.nextInt(bad.length);
                bad[at] ^= (byte) (1 << random.nextInt(8));
            }
            decodeEverywhere(bad, CorruptDataException.class);
        }
    }

    @Test
    void theForgeWritesHonestFiles() throws IOException {
        byte[] data = text(5000, 35);
        byte[] file = Forge.file(1, 0, 0, 1, data.length, data);
        assertArrayEquals(data, Kompakt.decompress(file));
        Map<String, Object> outcomes = decodeEverywhere(file, null);
        outcomes.forEach((api, outcome) -> assertEquals(Outcome.OK, outcome, api));
    }

    @Test
    void forgedBlocksClaimingHugeLengthsAreRefused() throws IOException {
        byte[] zstdOfZeros = zstdPayload(new byte[1000]);
        List<byte[]> forged = new ArrayList<>();
        // zstd: a payload whose expansion bound allows 64 MiB, but that is garbage or too short.
        forged.add(Forge.file(1, 2, 0, 1, Forge.MAX_RAW_LEN, noise(2048, 36)));
        forged.add(Forge.file(1, 2, 0, 1, Forge.MAX_RAW_LEN, pad(zstdOfZeros, 2048)));
        forged.add(Forge.file(1, 2, 0, 1, 1001, zstdOfZeros));
        forged.add(Forge.file(1, 2, 0, 1, 999, zstdOfZeros));
        // Past the format's limits.
        forged.add(Forge.file(1, 2, 0, 1, Forge.MAX_RAW_LEN + 1, noise(4096, 37)));
        forged.add(Forge.file(1, 2, 0, 1, -1, noise(4096, 38)));
        forged.add(Forge.file(1, 2, 0, 1, Forge.MAX_RAW_LEN, noise(10, 39))); // more than 32768x
        forged.add(Forge.file(1, 0, 0, 1, Forge.MAX_RAW_LEN, noise(100, 40))); // none: stored != raw
        forged.add(Forge.file(1, 1, 0, 1, Forge.MAX_RAW_LEN, noise(263_000, 41))); // lz4 garbage
        forged.add(Forge.file(1, 3, 0, 1, Forge.MAX_RAW_LEN, noise(66_000, 42))); // gzip garbage
        forged.add(Forge.file(1, 4, 0, 1, Forge.MAX_RAW_LEN, noise(66_000, 43))); // zlib garbage
        forged.add(Forge.file(1, 5, 0, 1, 100, noise(50, 44))); // zstd-dict in a 1.0 file
        forged.add(Forge.file(2, 5, 0, 1, 100, noise(50, 45))); // zstd-dict, unknown dictionary
        forged.add(Forge.file(1, 9, 0, 1, 100, noise(100, 46))); // unknown codec
        forged.add(Forge.file(1, 0, 4, 1, 100, noise(100, 47))); // unknown filter bit
        forged.add(Forge.file(1, 0, 0, 0, 100, noise(100, 48))); // typesize 0
        forged.add(Forge.file(1, 0, 2, 3, 100, noise(100, 49))); // delta with typesize 3
        forged.add(Forge.file(1, 0, 0, 1, 0, new byte[0])); // an empty block
        forged.add(Forge.file(4, 0, 0, 1, 100, noise(100, 50))); // a future major version (3 is compact)
        for (byte[] file : forged) {
            Map<String, Object> outcomes = decodeEverywhere(file, null);
            for (Map.Entry<String, Object> e : outcomes.entrySet()) {
                if (!e.getKey().equals("decompressedLength")) {
                    assertTrue(e.getValue() != Outcome.OK, () -> "a forged file decoded: " + outcomes);
                }
            }
        }
    }

    @Test
    void aRealSixtyFourMebibyteBlockDecodesOrHitsTheLimit() throws IOException {
        byte[] zeros = new byte[Forge.MAX_RAW_LEN];
        byte[] file = Kompakt.compress(zeros, WriteOptions.builder().codec("zstd:1").blockSize(Forge.MAX_RAW_LEN).build());
        assertTrue(file.length < 100_000, "64 MiB of zeros packs small: " + file.length);
        ReadOptions limited = ReadOptions.builder().maxDecompressedLength(1 << 20).build();
        assertThrows(LimitExceededException.class, () -> Kompakt.decompress(file, limited));
        try (InputStream in = new KompaktInputStream(new ByteArrayInputStream(file))) {
            assertEquals(zeros.length, in.skip(Long.MAX_VALUE));
        }
        assertEquals(zeros.length, Kompakt.decompressedLength(file));
    }

    @Test
    void garbageOfEveryShape() throws IOException {
        Random random = new Random(51);
        List<byte[]> inputs = new ArrayList<>();
        inputs.add(new byte[0]);
        inputs.add(new byte[] {'K'});
        inputs.add(new byte[] {'K', 'M', 'P', 'K'});
        inputs.add(Forge.fileHeader(1));
        inputs.add(Forge.fileHeader(2));
        inputs.add(noise(100, 52));
        byte[] valid = smallFile();
        for (int i = 0; i < 20; i++) {
            // A valid header, then garbage: reaches block code.
            byte[] g = noise(16 + random.nextInt(4000), 53 + i);
            System.arraycopy(Forge.fileHeader(1), 0, g, 0, 16);
            inputs.add(g);
            // A valid file with a chunk of it replaced.
            byte[] v = valid.clone();
            int at = random.nextInt(v.length - 40);
            System.arraycopy(noise(40, 80 + i), 0, v, at, 40);
            inputs.add(v);
        }
        for (byte[] input : inputs) {
            decodeEverywhere(input, null);
        }
    }

    @Test
    void fuzzCorpus() throws IOException {
        String dir = System.getenv("KOMPAKT_FUZZ_CORPUS");
        Path corpus = dir != null && !dir.isEmpty() ? Paths.get(dir) : Paths.get("/work/main/fuzz/corpus");
        if (!Files.isDirectory(corpus)) {
            // The corpus is made by the fuzzers and may be absent locally; the tests above make
            // their own hostile inputs. Named by the test script, it must be there.
            if (TestSupport.REQUIRE_INTEROP && dir != null) {
                fail("KOMPAKT_FUZZ_CORPUS is " + dir + ", which is not a folder (KOMPAKT_REQUIRE_INTEROP=1)");
            }
            org.junit.jupiter.api.Assumptions.abort("no fuzz corpus at " + corpus);
        }
        int files = 0;
        Map<String, Integer> answers = new TreeMap<>();
        for (String folder : new String[] {"sequential", "reader", "forged"}) {
            Path sub = corpus.resolve(folder);
            if (!Files.isDirectory(sub)) {
                continue;
            }
            List<Path> paths;
            try (Stream<Path> s = Files.list(sub)) {
                paths = s.filter(Files::isRegularFile).sorted().collect(java.util.stream.Collectors.toList());
            }
            for (Path p : paths) {
                byte[] input = Files.readAllBytes(p);
                if (input.length > (1 << 20)) {
                    continue;
                }
                try {
                    Map<String, Object> outcomes = decodeEverywhere(input, null);
                    outcomes.values().forEach(o -> answers.merge(String.valueOf(o), 1, Integer::sum));
                } catch (AssertionError e) {
                    throw new AssertionError(p + ": " + e.getMessage(), e);
                }
                files++;
            }
        }
        if (TestSupport.REQUIRE_INTEROP) {
            assertTrue(files > 0, "KOMPAKT_FUZZ_CORPUS " + corpus + " holds no files in sequential/, reader/, forged/");
        }
        System.out.println("fuzz corpus: " + files + " files, answers " + answers);
    }

    /** A zstd payload (one frame) made by kompakt itself: the block of a file written with zstd. */
    static byte[] zstdPayload(byte[] data) throws IOException {
        byte[] file = Kompakt.compress(data, WriteOptions.builder().codec("zstd:3").build());
        ByteBuffer b = ByteBuffer.wrap(file).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        assertEquals(Forge.TAG_BLOCK, b.get(16) & 0xff);
        assertEquals(2, b.get(17), "a zstd block");
        int stored = b.getInt(16 + 12);
        byte[] payload = new byte[stored];
        System.arraycopy(file, 16 + 24, payload, 0, stored);
        return payload;
    }

    static byte[] pad(byte[] b, int length) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(b);
        out.writeBytes(new byte[length - b.length]);
        return out.toByteArray();
    }
}
