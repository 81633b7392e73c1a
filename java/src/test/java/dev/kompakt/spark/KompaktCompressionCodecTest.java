package dev.kompakt.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kompakt.Dictionary;
import dev.kompakt.InvalidOptionException;
import dev.kompakt.Kompakt;
import dev.kompakt.TestSupport;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.InvocationTargetException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.SparkConf;
import org.apache.spark.io.CompressionCodec;
import org.apache.spark.io.CompressionCodec$;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The codec's settings and streams, and what Spark 4.2 allows a codec that is not its own. */
class KompaktCompressionCodecTest {
    static final String CLASS = KompaktCompressionCodec.class.getName();

    @Test
    void defaultsAndSettings() throws Exception {
        KompaktCompressionCodec codec = new KompaktCompressionCodec(new SparkConf(false));
        assertEquals("lz4", codec.writeOptions().codec());
        assertEquals(64 << 10, codec.writeOptions().blockSize());
        assertEquals(1, codec.writeOptions().threads());
        assertEquals(1, codec.readOptions().threads());

        SparkConf conf = new SparkConf(false).set(KompaktCompressionCodec.CODEC, "zstd")
                .set(KompaktCompressionCodec.LEVEL, "3").set(KompaktCompressionCodec.BLOCK_SIZE, "1m")
                .set(KompaktCompressionCodec.THREADS, "2");
        KompaktCompressionCodec zstd = new KompaktCompressionCodec(conf);
        assertEquals(1 << 20, zstd.writeOptions().blockSize());
        assertTrue(zstd.writeOptions().toString().contains("zstd:3"), zstd.writeOptions().toString());
        assertSame(zstd.writeOptions(), new KompaktCompressionCodec(conf.clone()).writeOptions(), "built once");
        assertEquals(128 << 10, new KompaktCompressionCodec(new SparkConf(false)
                .set(KompaktCompressionCodec.BLOCK_SIZE, "131072")).writeOptions().blockSize());
        assertEquals("60", new KompaktCompressionCodec(new SparkConf(false)
                .set(KompaktCompressionCodec.CODEC, "60")).writeOptions().codec());
        // A level alone is a unified level (60: zstd), not lz4's acceleration 60.
        String unified = new KompaktCompressionCodec(new SparkConf(false)
                .set(KompaktCompressionCodec.LEVEL, "60")).writeOptions().toString();
        assertTrue(unified.contains("codec zstd:"), unified);
    }

    @Test
    void aDictionaryAloneMeansZstd(@TempDir Path dir) throws Exception {
        List<byte[]> samples = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            samples.add(("{\"user\":" + i + ",\"plan\":\"team\",\"status\":\"active\"}").getBytes(StandardCharsets.UTF_8));
        }
        Path path = dir.resolve("d.kpkd");
        try (Dictionary d = Dictionary.train(samples, 1024)) {
            d.save(path);
        }
        String options = new KompaktCompressionCodec(new SparkConf(false)
                .set(KompaktCompressionCodec.DICTIONARY, path.toString())).writeOptions().toString();
        assertTrue(options.contains("codec zstd:3") && options.contains("dictionary"), options);
    }

    @Test
    void badSettingsNameTheirKey() {
        String[][] cases = {
            {KompaktCompressionCodec.CODEC, "nope", "invalid codec \"nope\""},
            {KompaktCompressionCodec.CODEC, "zstd:99", "invalid codec level \"zstd:99\""},
            {KompaktCompressionCodec.LEVEL, "high", "invalid level \"high\""},
            {KompaktCompressionCodec.BLOCK_SIZE, "1k", "invalid block size \"1024\""},
            {KompaktCompressionCodec.BLOCK_SIZE, "lots", "invalid block size \"lots\""},
            {KompaktCompressionCodec.THREADS, "1000", "invalid threads \"1000\""},
            {KompaktCompressionCodec.THREADS, "x", "invalid threads \"x\""},
            {KompaktCompressionCodec.DICTIONARY, "/no/such/file.kpkd", "/no/such/file.kpkd"},
        };
        for (String[] c : cases) {
            SparkConf conf = new SparkConf(false).set(c[0], c[1]);
            InvalidOptionException e = assertThrows(InvalidOptionException.class, () -> new KompaktCompressionCodec(conf),
                    c[0] + "=" + c[1]);
            assertTrue(e.getMessage().startsWith(c[0] + ": "), e.getMessage());
            assertTrue(e.getMessage().contains(c[2]), e.getMessage());
        }
        SparkConf twoLevels = new SparkConf(false).set(KompaktCompressionCodec.CODEC, "zstd:3")
                .set(KompaktCompressionCodec.LEVEL, "9");
        InvalidOptionException level = assertThrows(InvalidOptionException.class,
                () -> new KompaktCompressionCodec(twoLevels));
        assertTrue(level.getMessage().startsWith("spark.kompakt.level: invalid level \"9\": codec \"zstd:3\" already sets a level"),
                level.getMessage());
        SparkConf unified = new SparkConf(false).set(KompaktCompressionCodec.CODEC, "60")
                .set(KompaktCompressionCodec.LEVEL, "101");
        assertTrue(assertThrows(InvalidOptionException.class, () -> new KompaktCompressionCodec(unified))
                .getMessage().startsWith("spark.kompakt.level: "));
        // Through Spark's own factory, as spark.io.compression.codec is used: the cause names the key.
        SparkConf conf = new SparkConf(false).set(KompaktCompressionCodec.CODEC, "nope");
        Throwable e = assertThrows(Throwable.class, () -> CompressionCodec$.MODULE$.createCodec(conf, CLASS));
        assertTrue(e instanceof InvocationTargetException, e.toString());
        assertTrue(e.getCause().getMessage().startsWith("spark.kompakt.codec: invalid codec \"nope\""),
                e.getCause().getMessage());
    }

    @Test
    void streamsRoundTripAndConcatenate() throws Exception {
        CompressionCodec codec = CompressionCodec$.MODULE$.createCodec(new SparkConf(false), CLASS);
        assertTrue(codec instanceof KompaktCompressionCodec);
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        List<byte[]> parts = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            byte[] part = TestSupport.text(i * 40_000, i);
            parts.add(part);
            ByteArrayOutputStream one = new ByteArrayOutputStream();
            try (OutputStream out = codec.compressedOutputStream(one)) {
                out.write(part);
            }
            assertArrayEquals(part, Kompakt.decompress(one.toByteArray()));
            all.write(one.toByteArray());
        }
        // Spark's fast merge would concatenate compressed segments; the stream reads them as one.
        try (InputStream in = codec.compressedInputStream(new ByteArrayInputStream(all.toByteArray()))) {
            byte[] back = TestSupport.readAll(in);
            ByteArrayOutputStream expected = new ByteArrayOutputStream();
            for (byte[] p : parts) {
                expected.write(p);
            }
            assertArrayEquals(expected.toByteArray(), back);
        }
    }

    @Test
    void aDictionaryFromAKpkdFile(@TempDir Path dir) throws Exception {
        List<byte[]> samples = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            samples.add(("{\"row\":" + i + ",\"name\":\"n" + (i % 37) + "\",\"ok\":true}").getBytes(StandardCharsets.UTF_8));
        }
        Path kpkd = dir.resolve("d.kpkd");
        try (Dictionary d = Dictionary.train(samples, 4096)) {
            d.save(kpkd);
        }
        SparkConf conf = new SparkConf(false).set(KompaktCompressionCodec.CODEC, "zstd:3")
                .set(KompaktCompressionCodec.DICTIONARY, kpkd.toString());
        KompaktCompressionCodec codec = new KompaktCompressionCodec(conf);
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        try (OutputStream out = codec.compressedOutputStream(sink)) {
            out.write(samples.get(5));
        }
        try (InputStream in = codec.compressedInputStream(new ByteArrayInputStream(sink.toByteArray()))) {
            assertArrayEquals(samples.get(5), TestSupport.readAll(in));
        }
        assertThrows(InvalidOptionException.class, () -> new KompaktCompressionCodec(
                new SparkConf(false).set(KompaktCompressionCodec.CODEC, "lz4")
                        .set(KompaktCompressionCodec.DICTIONARY, kpkd.toString())));
    }

    /**
     * Spark 4.2's rules for a codec that is not one of its four: it never counts as supporting
     * concatenated streams (a class check), and event logs refuse it (they need a short name).
     * If a Spark upgrade changes either, this test says so.
     */
    @Test
    void whatSparkAllowsThirdPartyCodecs() {
        CompressionCodec codec = new KompaktCompressionCodec(new SparkConf(false));
        assertFalse(CompressionCodec$.MODULE$.supportsConcatenationOfSerializedStreams(codec));
        Exception e = assertThrows(Exception.class, () -> CompressionCodec$.MODULE$.getShortName(CLASS));
        assertTrue(e.getMessage().contains("CODEC_SHORT_NAME_NOT_FOUND"), e.getMessage());
    }
}
