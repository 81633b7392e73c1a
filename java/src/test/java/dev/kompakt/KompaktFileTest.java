package dev.kompakt;

import static dev.kompakt.TestSupport.text;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Random access with KompaktFile against the source bytes. */
class KompaktFileTest {
    @TempDir
    Path dir;

    Path write(byte[] data) throws Exception {
        Path path = dir.resolve("f.kpk");
        try (KompaktOutputStream out = KompaktOutputStream.toFile(path,
                WriteOptions.builder().codec("zstd:1").blockSize(64 << 10).build())) {
            out.write(data);
        }
        return path;
    }

    @Test
    void randomReadsMatchTheSource() throws Exception {
        byte[] data = text(1_000_000, 61);
        Path path = write(data);
        Random random = new Random(62);
        try (KompaktFile f = KompaktFile.open(path)) {
            assertEquals(1, f.streamCount());
            assertEquals(data.length, f.streamLength(0));
            assertEquals("plain", f.kind());
            for (int i = 0; i < 300; i++) {
                int pos = random.nextInt(data.length);
                int len = random.nextInt(random.nextBoolean() ? 100 : 200_000);
                byte[] dst = new byte[len + 10];
                int n = f.read(0, pos, dst, 5, len);
                int expected = Math.min(len, data.length - pos);
                assertEquals(expected, n);
                assertArrayEquals(Arrays.copyOfRange(data, pos, pos + n), Arrays.copyOfRange(dst, 5, 5 + n));
            }
            assertEquals(-1, f.read(0, data.length, new byte[10], 0, 10));
            assertEquals(-1, f.read(0, data.length + 100L, new byte[10], 0, 10));
            assertEquals(0, f.read(0, 5, new byte[10], 0, 0));
            assertArrayEquals(data, f.readFully(0));
        }
    }

    @Test
    void byteBuffers() throws Exception {
        byte[] data = text(300_000, 63);
        Path path = write(data);
        try (KompaktFile f = KompaktFile.open(path)) {
            for (ByteBuffer b : new ByteBuffer[] {ByteBuffer.allocate(100_000), ByteBuffer.allocateDirect(100_000)}) {
                b.position(10);
                int n = f.read(0, 123_456, b);
                assertEquals(99_990, n);
                assertEquals(100_000, b.position());
                b.flip().position(10);
                byte[] got = new byte[n];
                b.get(got);
                assertArrayEquals(Arrays.copyOfRange(data, 123_456, 123_456 + n), got);
            }
            ByteBuffer end = ByteBuffer.allocate(10);
            assertEquals(-1, f.read(0, data.length, end));
            assertEquals(0, end.position());
            assertThrows(ReadOnlyBufferException.class, () -> f.read(0, 0, ByteBuffer.allocate(4).asReadOnlyBuffer()));
        }
    }

    @Test
    void argumentsAndClosedFiles() throws Exception {
        Path path = write(text(1000, 64));
        KompaktFile f = KompaktFile.open(path);
        assertThrows(IndexOutOfBoundsException.class, () -> f.read(0, 0, new byte[10], 5, 6));
        assertThrows(IllegalArgumentException.class, () -> f.read(0, -1, new byte[10], 0, 10));
        InvalidOptionException noStream = assertThrows(InvalidOptionException.class, () -> f.streamLength(1));
        assertTrue(noStream.getMessage().contains("no stream 1"), noStream.getMessage());
        assertThrows(InvalidOptionException.class, () -> f.read(1, 0, new byte[10], 0, 10));
        assertThrows(InvalidOptionException.class, () -> f.read(-1, 0, new byte[10], 0, 10));
        f.close();
        f.close();
        KompaktUsageException e = assertThrows(KompaktUsageException.class, f::streamCount);
        assertTrue(e.getMessage().contains("closed"), e.getMessage());
        assertThrows(KompaktUsageException.class, () -> f.read(0, 0, new byte[1], 0, 1));
        assertTrue(f.toString().contains("closed"));
        assertThrows(KompaktIOException.class, () -> KompaktFile.open(dir.resolve("missing.kpk")));
        Files.write(dir.resolve("junk.kpk"), new byte[100]);
        assertThrows(CorruptDataException.class, () -> KompaktFile.open(dir.resolve("junk.kpk")));
    }

    @Test
    void readFullyHonoursTheLimit() throws Exception {
        Path path = write(text(100_000, 65));
        try (KompaktFile f = KompaktFile.open(path, ReadOptions.builder().maxDecompressedLength(50_000).build())) {
            LimitExceededException e = assertThrows(LimitExceededException.class, () -> f.readFully(0));
            assertTrue(e.getMessage().contains("100000"), e.getMessage());
            assertEquals(100, f.read(0, 0, new byte[100], 0, 100), "ranged reads are not limited");
        }
    }

    @Test
    void sharedBetweenThreads() throws Exception {
        byte[] data = text(2_000_000, 66);
        Path path = write(data);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try (KompaktFile f = KompaktFile.open(path, ReadOptions.builder().threads(1).build())) {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int seed = t;
                futures.add(pool.submit(() -> {
                    Random random = new Random(seed);
                    for (int i = 0; i < 100; i++) {
                        int pos = random.nextInt(data.length - 5000);
                        byte[] dst = new byte[5000];
                        assertEquals(5000, f.read(0, pos, dst, 0, 5000));
                        assertArrayEquals(Arrays.copyOfRange(data, pos, pos + 5000), dst);
                    }
                    return null;
                }));
            }
            for (Future<?> fu : futures) {
                fu.get();
            }
        } finally {
            pool.shutdown();
        }
    }
}
