package dev.kompakt;

import static dev.kompakt.TestSupport.noise;
import static dev.kompakt.TestSupport.readAll;
import static dev.kompakt.TestSupport.text;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.FilterInputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** KompaktOutputStream and KompaktInputStream. */
class StreamTest {
    static final WriteOptions SMALL_BLOCKS = WriteOptions.builder().codec("lz4").blockSize(64 << 10).threads(1).build();

    static byte[] compressStream(byte[] data, WriteOptions opts) throws IOException {
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        try (KompaktOutputStream out = new KompaktOutputStream(sink, opts)) {
            out.write(data);
        }
        return sink.toByteArray();
    }

    static byte[] decompressStream(byte[] file) throws IOException {
        try (InputStream in = new KompaktInputStream(new ByteArrayInputStream(file))) {
            return readAll(in);
        }
    }

    @Test
    void emptyAndTinyStreams() throws IOException {
        for (int n : new int[] {0, 1, 2, 1000}) {
            byte[] data = text(n, n);
            byte[] file = compressStream(data, SMALL_BLOCKS);
            assertArrayEquals(data, decompressStream(file));
            assertArrayEquals(data, Kompakt.decompress(file));
        }
        // Closing without writing anything makes a valid empty file.
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        new KompaktOutputStream(sink).close();
        assertArrayEquals(new byte[0], Kompakt.decompress(sink.toByteArray()));
        assertArrayEquals(new byte[0], decompressStream(sink.toByteArray()));
    }

    @Test
    void manySmallWritesAndWriteInt() throws IOException {
        byte[] data = text(400_000, 11);
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        Random random = new Random(1);
        try (KompaktOutputStream out = new KompaktOutputStream(sink, SMALL_BLOCKS)) {
            int i = 0;
            while (i < data.length) {
                if (random.nextInt(4) == 0) {
                    out.write(data[i++]);
                } else {
                    int n = Math.min(data.length - i, random.nextInt(3000));
                    out.write(data, i, n);
                    i += n;
                }
            }
        }
        byte[] file = sink.toByteArray();
        assertArrayEquals(data, Kompakt.decompress(file));
        // Read back byte by byte, and with odd-sized reads.
        try (InputStream in = new KompaktInputStream(new ByteArrayInputStream(file))) {
            for (int i = 0; i < 70_000; i++) {
                assertEquals(data[i] & 0xff, in.read());
            }
            byte[] rest = new byte[data.length - 70_000];
            int done = 0;
            while (done < rest.length) {
                int n = in.read(rest, done, Math.min(rest.length - done, 1 + random.nextInt(100_000)));
                assertTrue(n > 0);
                done += n;
            }
            assertArrayEquals(Arrays.copyOfRange(data, 70_000, data.length), rest);
            assertEquals(-1, in.read());
            assertEquals(-1, in.read(new byte[10], 0, 10));
            assertEquals(0, in.read(new byte[10], 0, 0));
        }
    }

    @Test
    void dataStreams() throws IOException {
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(new KompaktOutputStream(sink, SMALL_BLOCKS))) {
            for (int i = 0; i < 100_000; i++) {
                out.writeInt(i * 31);
                out.writeLong(-i);
            }
            out.writeUTF("end");
        }
        try (DataInputStream in = new DataInputStream(new KompaktInputStream(new ByteArrayInputStream(sink.toByteArray())))) {
            for (int i = 0; i < 100_000; i++) {
                assertEquals(i * 31, in.readInt());
                assertEquals(-i, in.readLong());
            }
            assertEquals("end", in.readUTF());
            assertEquals(-1, in.read());
        }
    }

    @Test
    void flushInTheMiddleThenMore() throws IOException {
        byte[] a = text(10_000, 12);
        byte[] b = text(150_000, 13);
        CountingSink sink = new CountingSink();
        try (KompaktOutputStream out = new KompaktOutputStream(sink, SMALL_BLOCKS)) {
            out.write(a);
            out.flush();
            assertTrue(sink.flushes >= 1);
            assertTrue(sink.size() > 0, "a flush writes the buffered block");
            int before = sink.size();
            out.flush(); // nothing buffered: no new block
            assertEquals(before, sink.size());
            out.write(b);
        }
        assertTrue(sink.closed);
        byte[] all = new byte[a.length + b.length];
        System.arraycopy(a, 0, all, 0, a.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        assertArrayEquals(all, Kompakt.decompress(sink.toByteArray()));
        assertArrayEquals(all, decompressStream(sink.toByteArray()));
    }

    @Test
    void largeMultiBlockDataOnTwoThreads() throws IOException {
        byte[] data = new byte[9_000_000];
        System.arraycopy(text(5_000_000, 14), 0, data, 0, 5_000_000);
        System.arraycopy(noise(4_000_000, 15), 0, data, 5_000_000, 4_000_000);
        WriteOptions opts = WriteOptions.builder().codec("zstd:1").threads(2).build(); // 1 MiB blocks, 8 buffered
        byte[] file = compressStream(data, opts);
        byte[] oneShot = Kompakt.compress(data, opts);
        assertArrayEquals(oneShot, file, "a stream writes the same bytes as compress");
        try (InputStream in = new KompaktInputStream(new ByteArrayInputStream(file),
                ReadOptions.builder().threads(2).build())) {
            assertArrayEquals(data, readAll(in));
        }
    }

    @Test
    void concatenatedFilesReadAsOne() throws IOException {
        byte[] a = text(100_000, 16);
        byte[] b = new byte[0];
        byte[] c = noise(70_000, 17);
        ByteArrayOutputStream cat = new ByteArrayOutputStream();
        cat.write(compressStream(a, SMALL_BLOCKS));
        cat.write(compressStream(b, SMALL_BLOCKS));
        cat.write(Kompakt.compress(c, WriteOptions.builder().codec("zstd:3").build()));
        byte[] expected = new byte[a.length + c.length];
        System.arraycopy(a, 0, expected, 0, a.length);
        System.arraycopy(c, 0, expected, a.length, c.length);
        try (InputStream in = KompaktInputStream.concatenated(new ByteArrayInputStream(cat.toByteArray()), null)) {
            assertArrayEquals(expected, readAll(in));
        }
        // No files at all is an empty stream when concatenated, a truncated file when not.
        try (InputStream in = KompaktInputStream.concatenated(new ByteArrayInputStream(new byte[0]), null)) {
            assertEquals(-1, in.read());
        }
        assertThrows(CorruptDataException.class, () -> decompressStream(new byte[0]));
        // Without concatenation, what follows the first file is not data.
        assertThrows(CorruptDataException.class, () -> decompressStream(cat.toByteArray()));
    }

    @Test
    void skipAndAvailable() throws IOException {
        byte[] data = text(500_000, 18);
        byte[] file = compressStream(data, SMALL_BLOCKS);
        try (InputStream in = new KompaktInputStream(new ByteArrayInputStream(file))) {
            assertEquals(0, in.available());
            assertEquals(data[0] & 0xff, in.read());
            assertEquals(65_535, in.available());
            assertEquals(10, in.skip(10));
            assertEquals(data[11] & 0xff, in.read());
            assertEquals(300_000, in.skip(300_000)); // across whole blocks
            assertEquals(data[300_012] & 0xff, in.read());
            assertEquals(data.length - 300_013, in.skip(Long.MAX_VALUE));
            assertEquals(-1, in.read());
            assertEquals(0, in.skip(5));
        }
    }

    @Test
    void filesWrittenAndReadByRust(@TempDir Path dir) throws IOException {
        byte[] data = text(300_000, 19);
        Path path = dir.resolve("data.kpk");
        try (KompaktOutputStream out = KompaktOutputStream.toFile(path, SMALL_BLOCKS)) {
            out.write(data, 0, 1000);
            out.flush();
            out.write(data, 1000, data.length - 1000);
            assertFalse(Files.exists(path), "the file appears when closed");
        }
        assertTrue(Files.exists(path));
        assertArrayEquals(data, Kompakt.decompress(Files.readAllBytes(path)));
        try (InputStream in = KompaktInputStream.open(path, null)) {
            assertArrayEquals(data, readAll(in));
        }
        // abort(): no file, nothing left behind; an existing file stays.
        Path other = dir.resolve("aborted.kpk");
        KompaktOutputStream out = KompaktOutputStream.toFile(other, SMALL_BLOCKS);
        out.write(data);
        out.abort();
        out.close();
        assertFalse(Files.exists(other));
        KompaktOutputStream again = KompaktOutputStream.toFile(path, SMALL_BLOCKS);
        again.write(new byte[] {1, 2, 3});
        again.abort();
        assertArrayEquals(data, Kompakt.decompress(Files.readAllBytes(path)));
        try (Stream<Path> files = Files.list(dir)) {
            assertEquals(1, files.count(), "no temporary files left");
        }
        // Missing folders and missing files are kompakt's I/O errors.
        assertThrows(KompaktIOException.class, () -> KompaktOutputStream.toFile(dir.resolve("no/such/x.kpk"), null));
        assertThrows(KompaktIOException.class, () -> KompaktInputStream.open(dir.resolve("missing.kpk"), null));
    }

    @Test
    void closedStreamsRefuseAndCloseIsIdempotent() throws IOException {
        CountingSink sink = new CountingSink();
        KompaktOutputStream out = new KompaktOutputStream(sink, SMALL_BLOCKS);
        out.write(1);
        out.close();
        out.close();
        assertEquals(1, sink.closes);
        assertThrows(IOException.class, () -> out.write(2));
        assertThrows(IOException.class, () -> out.write(new byte[3]));
        assertThrows(IOException.class, out::flush);

        KompaktInputStream in = new KompaktInputStream(new ByteArrayInputStream(sink.toByteArray()));
        in.close();
        in.close();
        assertThrows(IOException.class, in::read);
        assertThrows(IOException.class, () -> in.read(new byte[4], 0, 4));
        assertThrows(IOException.class, in::available);
    }

    @Test
    void failingOutputBreaksTheStreamAndFreesIt(@TempDir Path dir) throws IOException {
        FailingSink sink = new FailingSink(100);
        KompaktOutputStream out = new KompaktOutputStream(sink, SMALL_BLOCKS);
        byte[] data = noise(200_000, 20);
        IOException e = assertThrows(IOException.class, () -> out.write(data));
        assertEquals("disk full", e.getMessage());
        assertThrows(IOException.class, () -> out.write(1), "a broken stream refuses writes");
        // Releases without finishing and closes the sink, but says the file is not complete
        // (a caller that ignored the write's exception must not take it for finished).
        KompaktUsageException notFinished = assertThrows(KompaktUsageException.class, out::close);
        assertEquals("disk full", notFinished.getCause().getMessage());
        assertTrue(sink.closed);
        out.close(); // idempotent after that

        // A file stream closed after its input failed leaves no file.
        Path path = dir.resolve("never.kpk");
        try (KompaktOutputStream file = KompaktOutputStream.toFile(path, SMALL_BLOCKS)) {
            file.write(data);
            throw new IllegalStateException("the caller fails");
        } catch (IllegalStateException expected) {
            // try-with-resources closed it normally: the file is complete.
        }
        assertTrue(Files.exists(path));
    }

    @Test
    void failingInputPropagatesItsException() throws IOException {
        byte[] file = compressStream(noise(300_000, 21), SMALL_BLOCKS);
        InputStream broken = new FilterInputStream(new ByteArrayInputStream(file)) {
            int served;

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                if (served > 100_000) {
                    throw new IOException("network down");
                }
                int n = super.read(b, off, len);
                served += Math.max(n, 0);
                return n;
            }
        };
        try (KompaktInputStream in = new KompaktInputStream(broken)) {
            IOException e = assertThrows(IOException.class, () -> readAll(in));
            assertEquals("network down", e.getMessage());
            KompaktUsageException again = assertThrows(KompaktUsageException.class, () -> in.read(new byte[10]));
            assertTrue(again.getMessage().contains("network down"), again.getMessage());
        }
    }

    @Test
    void trickleInputOneByteAtATime() throws IOException {
        byte[] data = text(200_000, 22);
        byte[] file = compressStream(data, SMALL_BLOCKS);
        InputStream trickle = new FilterInputStream(new ByteArrayInputStream(file)) {
            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                return super.read(b, off, Math.min(len, 1));
            }
        };
        try (InputStream in = new KompaktInputStream(trickle)) {
            assertArrayEquals(data, readAll(in));
        }
    }

    @Test
    void shortWritesOfTheSinkAreHandledByOutputStream() throws IOException {
        // A sink that splits every write: the stream must still write every byte once.
        ByteArrayOutputStream target = new ByteArrayOutputStream();
        OutputStream splitting = new FilterOutputStream(target) {
            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                for (int i = 0; i < len; i += 7) {
                    out.write(b, off + i, Math.min(7, len - i));
                }
            }
        };
        byte[] data = text(100_000, 23);
        try (KompaktOutputStream out = new KompaktOutputStream(splitting, SMALL_BLOCKS)) {
            out.write(data);
        }
        assertArrayEquals(data, Kompakt.decompress(target.toByteArray()));
    }

    @Test
    void anUnclosedFileStreamLeavesNothingOnceCollected(@TempDir Path dir) throws Exception {
        // Over an existing file, so that the writer's temporary file has a name to see (a new
        // file is written unnamed on Linux, and leaves nothing whatever happens).
        Path target = dir.resolve("forgotten.kpk");
        Files.write(target, new byte[] {1, 2, 3});
        writeAndForget(target);
        try (Stream<Path> files = Files.list(dir)) {
            assertEquals(2, files.count(), "the temporary file exists while the stream lives");
        }
        long deadline = System.nanoTime() + 20_000_000_000L;
        long left;
        do {
            System.gc();
            Thread.sleep(50);
            try (Stream<Path> files = Files.list(dir)) {
                left = files.count();
            }
        } while (left > 1 && System.nanoTime() < deadline);
        assertEquals(1, left, "the Cleaner freed the writer, which removed its temporary file");
        assertArrayEquals(new byte[] {1, 2, 3}, Files.readAllBytes(target), "the old file is untouched");
    }

    private static void writeAndForget(Path path) throws IOException {
        KompaktOutputStream out = KompaktOutputStream.toFile(path, SMALL_BLOCKS);
        out.write(text(100_000, 24));
    }

    /** Counts flushes and closes. */
    static final class CountingSink extends ByteArrayOutputStream {
        int flushes;
        int closes;
        boolean closed;

        @Override
        public void flush() {
            flushes++;
        }

        @Override
        public void close() {
            closes++;
            closed = true;
        }
    }

    /** Fails once more than {@code limit} bytes were written. */
    static final class FailingSink extends OutputStream {
        final int limit;
        int written;
        boolean closed;

        FailingSink(int limit) {
            this.limit = limit;
        }

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            if (written + len > limit) {
                throw new IOException("disk full");
            }
            written += len;
        }

        @Override
        public void close() {
            closed = true;
        }
    }
}
