package dev.kompakt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * crates/kompakt-api/tests/bad_options.tsv, the table of bad options every front end checks:
 * building WriteOptions with a row's options throws an InvalidOptionException whose message
 * contains the row's message. Every option of the table (codec, level, threads, typesize,
 * filter, block_size) has a WriteOptions setter, so every row is expressed.
 */
class BadOptionsTest {
    @Test
    void everyRowOfTheTable() throws Exception {
        Path table = TestSupport.requiredPath("KOMPAKT_BAD_OPTIONS",
                "/work/main/crates/kompakt-api/tests/bad_options.tsv");
        List<String> failures = new ArrayList<>();
        int rows = 0;
        for (String line : Files.readAllLines(table)) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            String[] f = line.split("\t", -1);
            assertEquals(4, f.length, "case, options, kind, message: " + line);
            String name = f[0];
            assertEquals("option", f[2], name + ": only option errors are in the table");
            WriteOptions.Builder b = WriteOptions.builder();
            for (String option : f[1].split(";")) {
                String[] kv = option.split("=", 2);
                String value = kv[1];
                switch (kv[0]) {
                    case "codec":
                        b.codec(value);
                        break;
                    case "level":
                        b.level(Integer.parseInt(value));
                        break;
                    case "threads":
                        b.threads(Integer.parseInt(value));
                        break;
                    case "typesize":
                        b.typesize(Integer.parseInt(value));
                        break;
                    case "filter":
                        b.filter(value);
                        break;
                    case "block_size":
                        b.blockSize(Integer.parseInt(value));
                        break;
                    default:
                        failures.add(name + ": the Java API has no option " + kv[0]);
                        continue;
                }
            }
            rows++;
            try {
                WriteOptions built = b.build();
                failures.add(name + ": accepted (" + built + ")");
            } catch (InvalidOptionException e) {
                assertEquals(ErrorKind.OPTION, e.kind());
                if (!e.getMessage().contains(f[3])) {
                    failures.add(name + ": \"" + e.getMessage() + "\" does not contain \"" + f[3] + "\"");
                }
            }
        }
        assertTrue(rows >= 10, "rows: " + rows);
        assertTrue(failures.isEmpty(), String.join("\n", failures));
    }

    @Test
    void goodOptionsBuild() {
        for (String codec : RoundTripTest.CODECS) {
            WriteOptions.builder().codec(codec).build();
        }
        WriteOptions.builder().codec("zstd").level(22).build();
        WriteOptions.builder().codec("zstd").level(-50).build();
        WriteOptions.builder().threads(0).threads(256).blockSize(64 << 10).build();
        WriteOptions.builder().blockSize(64 << 20).typesize(255).filter("auto").build();
        assertThrows(InvalidOptionException.class, () -> WriteOptions.builder().codec("").build());
    }
}
