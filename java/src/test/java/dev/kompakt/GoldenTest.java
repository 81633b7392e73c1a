package dev.kompakt;

import static dev.kompakt.TestSupport.readAll;
import static dev.kompakt.TestSupport.xxh3;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The golden files of tests/golden (files written by released versions of the format): every
 * stream of every MANIFEST.tsv row decodes to its length and XXH3-64, through KompaktFile and,
 * for single-stream files, through Kompakt.decompress and both input streams.
 */
class GoldenTest {
    /** One file's rows of a manifest. */
    static final class Expected {
        int streams = -1;
        final Map<Integer, long[]> lengths = new LinkedHashMap<>();
        final Map<Integer, String> hashes = new LinkedHashMap<>();
        String metaHex;
    }

    static Map<String, Expected> manifest(Path dir) throws IOException {
        Map<String, Expected> files = new LinkedHashMap<>();
        for (String line : Files.readAllLines(dir.resolve("MANIFEST.tsv"))) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            String[] f = line.split("\t", -1);
            Expected e = files.computeIfAbsent(f[0], k -> new Expected());
            switch (f[1]) {
                case "streams":
                    e.streams = Integer.parseInt(f[2]);
                    break;
                case "meta":
                    e.metaHex = f[2];
                    break;
                default:
                    int stream = Integer.parseInt(f[1]);
                    e.lengths.put(stream, new long[] {Long.parseLong(f[2])});
                    e.hashes.put(stream, f[3]);
            }
        }
        return files;
    }

    @Test
    void version1() throws IOException {
        int checked = check(TestSupport.goldenDir().resolve("v1"), ReadOptions.DEFAULT);
        assertTrue(checked >= 15, "files checked: " + checked);
    }

    @Test
    void version2WithItsDictionary() throws IOException {
        Path dir = TestSupport.goldenDir().resolve("v2");
        try (Dictionary dict = Dictionary.load(dir.resolve("dictionary.kpkd"))) {
            ReadOptions withDict = ReadOptions.builder().dictionaries(dict).build();
            assertEquals(1, check(dir, withDict));
            try (KompaktFile f = KompaktFile.open(dir.resolve("dictionary.kpk"))) {
                MissingDictionaryException e = assertThrows(MissingDictionaryException.class, () -> f.readFully(0));
                assertTrue(e.getMessage().contains(dict.id()), e.getMessage() + " names " + dict.id());
                assertEquals(ErrorKind.DICTIONARY, e.kind());
                assertEquals(3000, f.readFully(1).length, "the noise stream was stored raw: no dictionary needed");
            }
        }
    }

    static int check(Path dir, ReadOptions options) throws IOException {
        Map<String, Expected> files = manifest(dir);
        List<String> problems = new ArrayList<>();
        for (Map.Entry<String, Expected> entry : files.entrySet()) {
            Path path = dir.resolve(entry.getKey());
            Expected e = entry.getValue();
            try (KompaktFile f = KompaktFile.open(path, options)) {
                assertEquals(e.streams, f.streamCount(), entry.getKey() + " streams");
                for (Map.Entry<Integer, long[]> s : e.lengths.entrySet()) {
                    int stream = s.getKey();
                    long length = s.getValue()[0];
                    assertEquals(length, f.streamLength(stream), entry.getKey() + " stream " + stream);
                    byte[] data = f.readFully(stream);
                    assertEquals(length, data.length);
                    assertEquals(e.hashes.get(stream), xxh3(data), entry.getKey() + " stream " + stream);
                }
                if (e.metaHex != null) {
                    assertEquals(e.metaHex, hex(f.metadata()), entry.getKey() + " metadata");
                    assertTrue(!f.kind().equals("plain") || !f.metadataString().contains("kompakt"),
                            entry.getKey() + ": " + f.kind());
                }
            }
            if (e.streams == 1) {
                long length = e.lengths.get(0)[0];
                String hash = e.hashes.get(0);
                byte[] file = Files.readAllBytes(path);
                byte[] oneShot = Kompakt.decompress(file, options);
                assertEquals(hash, xxh3(oneShot), entry.getKey() + " decompress");
                assertEquals(length, Kompakt.decompressedLength(file));
                try (InputStream in = new KompaktInputStream(new ByteArrayInputStream(file), options)) {
                    assertEquals(hash, xxh3(readAll(in)), entry.getKey() + " stream");
                }
                try (InputStream in = KompaktInputStream.open(path, options)) {
                    assertArrayEquals(oneShot, readAll(in), entry.getKey() + " file stream");
                }
            } else if (e.streams == 0) {
                assertEquals(0, Kompakt.decompress(Files.readAllBytes(path), options).length);
            }
        }
        assertTrue(problems.isEmpty(), problems.toString());
        return files.size();
    }

    static String hex(byte[] b) {
        StringBuilder sb = new StringBuilder();
        for (byte x : b) {
            sb.append(String.format("%02x", x & 0xff));
        }
        return sb.toString();
    }

    @Test
    void kindsOfObjectFiles() throws IOException {
        Path v1 = TestSupport.goldenDir().resolve("v1");
        try (KompaktFile f = KompaktFile.open(v1.resolve("python-object.kpk"))) {
            assertEquals("python-object", f.kind());
            assertTrue(f.metadataString().startsWith("{\"kompakt\":\"python-pickle\""), f.metadataString());
        }
        try (KompaktFile f = KompaktFile.open(v1.resolve("r-object.kpk"))) {
            assertEquals("r-object", f.kind());
        }
        try (KompaktFile f = KompaktFile.open(v1.resolve("zstd-3.kpk"))) {
            assertEquals("plain", f.kind());
            assertEquals(0, f.metadata().length);
        }
        Path table = v1.resolve("table/fst.kpk");
        if (Files.exists(table)) {
            try (KompaktFile f = KompaktFile.open(table)) {
                assertEquals("table", f.kind());
            }
        }
    }
}
