package dev.kompakt;

import static dev.kompakt.TestSupport.noise;
import static dev.kompakt.TestSupport.readAll;
import static dev.kompakt.TestSupport.runOk;
import static dev.kompakt.TestSupport.text;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Files shared with kompakt's other front ends: what Java writes, the command line
 * (KOMPAKT_BIN) and Python (KOMPAKT_PYTHON_BIN) read back equal, and the reverse.
 */
class InteropTest {
    @TempDir
    Path dir;

    static final String PY_DECOMPRESS = "import kompakt, sys\n"
            + "data = open(sys.argv[1], 'rb').read()\n"
            + "d = [kompakt.Dictionary(open(p, 'rb').read()) for p in sys.argv[3:]]\n"
            + "out = kompakt.decompress(data, dictionary=d) if d else kompakt.decompress(data)\n"
            + "open(sys.argv[2], 'wb').write(out)\n";

    static final String PY_COMPRESS = "import kompakt, sys\n"
            + "data = open(sys.argv[1], 'rb').read()\n"
            + "open(sys.argv[2], 'wb').write(kompakt.compress(data, codec=sys.argv[3], block_size=65536))\n";

    byte[] sample() {
        byte[] data = new byte[700_000];
        System.arraycopy(text(500_000, 91), 0, data, 0, 500_000);
        System.arraycopy(noise(200_000, 92), 0, data, 500_000, 200_000);
        return data;
    }

    @Test
    void javaWritesTheCommandLineAndPythonRead() throws Exception {
        Path bin = TestSupport.kompaktBin();
        Path python = TestSupport.pythonBin();
        byte[] data = sample();
        Path stream = dir.resolve("stream.kpk");
        try (OutputStream out = new KompaktOutputStream(Files.newOutputStream(stream),
                WriteOptions.builder().codec("lz4hc:9").blockSize(64 << 10).threads(2).build())) {
            out.write(data);
        }
        Path oneShot = Files.write(dir.resolve("oneshot.kpk"), Kompakt.compress(data,
                WriteOptions.builder().codec("zstd:3").typesize(8).build()));
        Path atomic = dir.resolve("atomic.kpk");
        try (KompaktOutputStream out = KompaktOutputStream.toFile(atomic, WriteOptions.builder().level(60).build())) {
            out.write(data);
        }
        for (Path file : List.of(stream, oneShot, atomic)) {
            Path fromCli = dir.resolve(file.getFileName() + ".cli");
            runOk(List.of(bin.toString(), "-q", "decompress", file.toString(), "-o", fromCli.toString()));
            assertArrayEquals(data, Files.readAllBytes(fromCli), file + " through the CLI");
            runOk(List.of(bin.toString(), "-q", "verify", file.toString()));
            Path fromPy = dir.resolve(file.getFileName() + ".py");
            runOk(List.of(python.toString(), "-c", PY_DECOMPRESS, file.toString(), fromPy.toString()));
            assertArrayEquals(data, Files.readAllBytes(fromPy), file + " through Python");
        }
    }

    @Test
    void theCommandLineAndPythonWriteJavaReads() throws Exception {
        Path bin = TestSupport.kompaktBin();
        Path python = TestSupport.pythonBin();
        byte[] data = sample();
        Path raw = Files.write(dir.resolve("data.bin"), data);
        Path cli = dir.resolve("cli.kpk");
        runOk(List.of(bin.toString(), "-q", "compress", raw.toString(), "-o", cli.toString(), "--codec", "zstd:3",
                "-b", "64K"));
        Path cliTyped = dir.resolve("cli-typed.kpk");
        runOk(List.of(bin.toString(), "-q", "compress", raw.toString(), "-o", cliTyped.toString(), "--codec", "lz4",
                "--typesize", "8", "--filter", "delta"));
        Path py = dir.resolve("py.kpk");
        runOk(List.of(python.toString(), "-c", PY_COMPRESS, raw.toString(), py.toString(), "gzip:6"));
        for (Path file : List.of(cli, cliTyped, py)) {
            byte[] bytes = Files.readAllBytes(file);
            assertArrayEquals(data, Kompakt.decompress(bytes), file.toString());
            try (InputStream in = KompaktInputStream.open(file, null)) {
                assertArrayEquals(data, readAll(in), file.toString());
            }
            try (KompaktFile f = KompaktFile.open(file)) {
                assertArrayEquals(data, f.readFully(0), file.toString());
            }
        }
        // Files of the command line, one after another, read as one stream.
        ByteArrayOutputStream cat = new ByteArrayOutputStream();
        cat.write(Files.readAllBytes(cli));
        cat.write(Files.readAllBytes(py));
        try (InputStream in = KompaktInputStream.concatenated(new java.io.ByteArrayInputStream(cat.toByteArray()), null)) {
            byte[] both = readAll(in);
            assertEquals(2 * data.length, both.length);
            assertArrayEquals(data, java.util.Arrays.copyOfRange(both, data.length, both.length));
        }
    }

    @Test
    void dictionariesTravelAsKpkdFiles() throws Exception {
        Path bin = TestSupport.kompaktBin();
        Path python = TestSupport.pythonBin();
        List<byte[]> samples = DictionaryTest.records(2000, 93);
        ByteArrayOutputStream joined = new ByteArrayOutputStream();
        for (byte[] s : samples) {
            joined.write(s);
            joined.write('\n');
        }
        byte[] data = joined.toByteArray();
        Path kpkd = dir.resolve("records.kpkd");
        try (Dictionary dict = Dictionary.train(samples, 4096)) {
            dict.save(kpkd);
            // Java compresses with it; the CLI and Python read with the .kpkd.
            Path javaFile = Files.write(dir.resolve("java.kpk"),
                    Kompakt.compress(data, WriteOptions.builder().dictionary(dict).build()));
            Path out = dir.resolve("java.out");
            runOk(List.of(bin.toString(), "-q", "decompress", javaFile.toString(), "-o", out.toString(), "-D",
                    kpkd.toString()));
            assertArrayEquals(data, Files.readAllBytes(out));
            Path outPy = dir.resolve("java.py.out");
            runOk(List.of(python.toString(), "-c", PY_DECOMPRESS, javaFile.toString(), outPy.toString(),
                    kpkd.toString()));
            assertArrayEquals(data, Files.readAllBytes(outPy));
            // The CLI compresses with it; Java reads.
            Path raw = Files.write(dir.resolve("records.jsonl"), data);
            Path cliFile = dir.resolve("cli.kpk");
            runOk(List.of(bin.toString(), "-q", "compress", raw.toString(), "-o", cliFile.toString(), "-D",
                    kpkd.toString()));
            assertArrayEquals(data, Kompakt.decompress(Files.readAllBytes(cliFile),
                    ReadOptions.builder().dictionaries(dict).build()));
        }
    }
}
