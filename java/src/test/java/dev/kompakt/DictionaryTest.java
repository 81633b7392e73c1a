package dev.kompakt;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** zstd dictionaries: train, save, load, compress with, decompress with and without. */
class DictionaryTest {
    static List<byte[]> records(int n, long seed) {
        Random random = new Random(seed);
        String[] cities = {"Berlin", "Lisbon", "Osaka", "Quito", "Accra", "Perth"};
        List<byte[]> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String json = "{\"id\":" + random.nextInt(1_000_000) + ",\"user\":\"user" + random.nextInt(5000)
                    + "\",\"city\":\"" + cities[random.nextInt(cities.length)] + "\",\"score\":"
                    + random.nextInt(100) + ",\"active\":" + random.nextBoolean() + ",\"tags\":[\"a\",\"b\"]}";
            out.add(json.getBytes(StandardCharsets.UTF_8));
        }
        return out;
    }

    @Test
    @SuppressWarnings("try")
    void trainCompressDecompress(@TempDir Path dir) throws Exception {
        List<byte[]> samples = records(2000, 71);
        try (Dictionary dict = Dictionary.train(samples, 8 * 1024)) {
            assertTrue(dict.id().matches("[0-9a-f]{16}"), dict.id());
            assertTrue(dict.bytes().length <= 8 * 1024);
            WriteOptions with = WriteOptions.builder().codec("zstd:3").dictionary(dict).build();
            assertTrue(with.toString().contains(dict.id()), with.toString());
            ReadOptions read = ReadOptions.builder().dictionaries(dict).build();
            int plainTotal = 0;
            int dictTotal = 0;
            for (byte[] record : records(50, 72)) {
                byte[] packed = Kompakt.compress(record, with);
                dictTotal += packed.length;
                plainTotal += Kompakt.compress(record, WriteOptions.builder().codec("zstd:3").build()).length;
                assertArrayEquals(record, Kompakt.decompress(packed, read));
            }
            assertTrue(dictTotal < plainTotal, dictTotal + " < " + plainTotal);

            byte[] one = Kompakt.compress(samples.get(0), with);
            MissingDictionaryException e =
                    assertThrows(MissingDictionaryException.class, () -> Kompakt.decompress(one));
            assertTrue(e.getMessage().contains(dict.id()), e.getMessage());
            assertEquals(ErrorKind.DICTIONARY, e.kind());

            // Streams with a dictionary.
            ByteArrayOutputStream sink = new ByteArrayOutputStream();
            try (KompaktOutputStream out = new KompaktOutputStream(sink, with)) {
                for (byte[] r : samples) {
                    out.write(r);
                }
            }
            try (InputStream in = new KompaktInputStream(new ByteArrayInputStream(sink.toByteArray()), read)) {
                assertEquals(samples.stream().mapToInt(r -> r.length).sum(), TestSupport.readAll(in).length);
            }
            assertThrows(MissingDictionaryException.class, () -> {
                try (InputStream in = new KompaktInputStream(new ByteArrayInputStream(sink.toByteArray()))) {
                    TestSupport.readAll(in);
                }
            });

            // Saved and loaded back: the same id and bytes, the same .kpkd as the CLI and Python use.
            Path kpkd = dir.resolve("records.kpkd");
            dict.save(kpkd);
            try (Dictionary back = Dictionary.load(kpkd)) {
                assertEquals(dict.id(), back.id());
                assertArrayEquals(dict.bytes(), back.bytes());
                assertArrayEquals(samples.get(0), Kompakt.decompress(one, ReadOptions.builder().dictionaries(back).build()));
            }

            // Closing the dictionary does not break options built with it.
            dict.close();
            assertThrows(KompaktUsageException.class, dict::bytes);
            assertArrayEquals(samples.get(1), decompressWith(kpkd, Kompakt.compress(samples.get(1), with)));
            assertThrows(IllegalStateException.class, () -> WriteOptions.builder().dictionary(dict).build());
            assertThrows(KompaktUsageException.class, () -> Kompakt.decompress(one, read));
        }
    }

    static byte[] decompressWith(Path kpkd, byte[] packed) throws Exception {
        try (Dictionary d = Dictionary.load(kpkd)) {
            return Kompakt.decompress(packed, ReadOptions.builder().dictionaries(d).build());
        }
    }

    @Test
    void badDictionariesAndSamples() throws Exception {
        assertThrows(NullPointerException.class, () -> Dictionary.train(null, 1000));
        List<byte[]> withNull = new ArrayList<>(records(10, 73));
        withNull.add(null);
        assertThrows(NullPointerException.class, () -> Dictionary.train(withNull, 1000));
        assertThrows(InvalidOptionException.class, () -> Dictionary.train(records(100, 74), -5));
        // Too few samples: kompakt says why (an option error or a failure, never a crash).
        Exception e = assertThrows(Exception.class, () -> Dictionary.train(records(2, 75), 4096));
        assertTrue(e instanceof KompaktException || e instanceof InvalidOptionException, e.toString());
        // Bytes that start with zstd's dictionary magic but do not parse are refused.
        byte[] fake = new byte[200];
        fake[0] = 0x37;
        fake[1] = (byte) 0xA4;
        fake[2] = 0x30;
        fake[3] = (byte) 0xEC;
        Exception bad = assertThrows(Exception.class, () -> Dictionary.load(fake));
        assertTrue(bad instanceof KompaktException || bad instanceof InvalidOptionException, bad.toString());
        // Raw content (no magic) is a valid dictionary.
        try (Dictionary raw = Dictionary.load("some shared content".getBytes(StandardCharsets.UTF_8))) {
            assertEquals(16, raw.id().length());
        }
        // A dictionary needs zstd.
        try (Dictionary d = Dictionary.train(records(1000, 76), 4096)) {
            assertThrows(InvalidOptionException.class,
                    () -> WriteOptions.builder().codec("lz4").dictionary(d).build());
        }
    }
}
