package dev.kompakt;

import static dev.kompakt.TestSupport.readAll;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** Many streams at once, as Spark makes them: results right, the buffer pool bounded. */
class ConcurrencyTest {
    static final WriteOptions SPARK_LIKE = WriteOptions.builder().codec("lz4").blockSize(64 << 10).threads(1).build();
    static final ReadOptions ONE_THREAD = ReadOptions.builder().threads(1).build();

    @Test
    void eightThreadsFiveHundredStreamsEach() throws Exception {
        int threads = 8;
        int streams = 500;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<Long>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                results.add(pool.submit(() -> {
                    long total = 0;
                    for (int s = 0; s < streams; s++) {
                        int records = (thread * 31 + s * 7) % 300;
                        ByteArrayOutputStream sink = new ByteArrayOutputStream();
                        try (DataOutputStream out = new DataOutputStream(new KompaktOutputStream(sink, SPARK_LIKE))) {
                            for (int r = 0; r < records; r++) {
                                out.writeInt(r);
                                out.writeUTF("thread " + thread + " stream " + s + " record " + r);
                            }
                        }
                        byte[] file = sink.toByteArray();
                        InputStream raw = s % 2 == 0
                                ? KompaktInputStream.concatenated(new ByteArrayInputStream(file), ONE_THREAD)
                                : new KompaktInputStream(new ByteArrayInputStream(file), ONE_THREAD);
                        try (DataInputStream in = new DataInputStream(raw)) {
                            for (int r = 0; r < records; r++) {
                                assertEquals(r, in.readInt());
                                assertEquals("thread " + thread + " stream " + s + " record " + r, in.readUTF());
                            }
                            assertEquals(-1, in.read());
                        }
                        if (s % 50 == 0) {
                            byte[] text = ("payload " + s).repeat(1000).getBytes(StandardCharsets.UTF_8);
                            assertArrayEquals(text, Kompakt.decompress(Kompakt.compress(text, SPARK_LIKE), ONE_THREAD));
                        }
                        total += records;
                        assertTrue(BufferPool.pooledBytes() <= BufferPool.maxBytes(), "pool within its bound");
                    }
                    return total;
                }));
            }
            long total = 0;
            for (Future<Long> f : results) {
                total += f.get();
            }
            assertTrue(total > 100_000, "records: " + total);
        } finally {
            pool.shutdown();
        }
        assertTrue(BufferPool.pooledBytes() <= BufferPool.maxBytes());
        assertTrue(BufferPool.pooledCount() <= 15 * BufferPool.SLOTS);
    }

    @Test
    void poolReusesAndBounds() {
        byte[] a = BufferPool.acquire(64 << 10);
        assertEquals(64 << 10, a.length);
        BufferPool.release(a);
        byte[] b = BufferPool.acquire(50_000);
        assertTrue(b == a || b.length == 64 << 10, "the same class");
        BufferPool.release(b);
        assertEquals(4096, BufferPool.acquire(0).length);
        assertEquals(100 << 20, BufferPool.acquire(100 << 20).length, "past the largest class: exact, not pooled");
        // Returning far more than the bound keeps the pool within it.
        for (int i = 0; i < 100; i++) {
            BufferPool.release(new byte[8 << 20]);
            BufferPool.release(new byte[1000]); // not a class size: ignored
        }
        assertTrue(BufferPool.pooledBytes() <= BufferPool.maxBytes());
        int count = 0;
        for (int i = 0; i < 20; i++) {
            byte[] x = BufferPool.acquire(8 << 20);
            count += x.length == 8 << 20 ? 1 : 0;
        }
        assertEquals(20, count);
    }

    @Test
    void sharedOptionsAndDictionaryAcrossThreads() throws Exception {
        List<byte[]> samples = DictionaryTest.records(1000, 95);
        try (Dictionary dict = Dictionary.train(samples, 4096)) {
            WriteOptions with = WriteOptions.builder().dictionary(dict).threads(1).build();
            ReadOptions read = ReadOptions.builder().dictionaries(dict).threads(1).build();
            ExecutorService pool = Executors.newFixedThreadPool(4);
            try {
                List<Future<?>> fs = new ArrayList<>();
                for (int t = 0; t < 4; t++) {
                    fs.add(pool.submit(() -> {
                        for (byte[] s : samples) {
                            assertArrayEquals(s, Kompakt.decompress(Kompakt.compress(s, with), read));
                        }
                        ByteArrayOutputStream sink = new ByteArrayOutputStream();
                        try (KompaktOutputStream out = new KompaktOutputStream(sink, with)) {
                            for (byte[] s : samples) {
                                out.write(s);
                            }
                        }
                        try (InputStream in = new KompaktInputStream(new ByteArrayInputStream(sink.toByteArray()), read)) {
                            readAll(in);
                        }
                        return null;
                    }));
                }
                for (Future<?> f : fs) {
                    f.get();
                }
            } finally {
                pool.shutdown();
            }
        }
    }
}
