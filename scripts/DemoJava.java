// kompakt from Java, as scripts/demo.sh runs it (a single-file program: Java 11+ compiles it on
// the fly): java -cp kompakt-0.1.0.jar scripts/DemoJava.java FILE
//
// Compresses FILE with KompaktOutputStream into FILE.java.kpk (the same format the CLI, Python
// and R read), reads it back with KompaktInputStream, reads a range by random access with
// KompaktFile, and shows what a damaged copy gives: an exception, never a crash.

import dev.kompakt.CorruptDataException;
import dev.kompakt.Kompakt;
import dev.kompakt.KompaktFile;
import dev.kompakt.KompaktInputStream;
import dev.kompakt.KompaktOutputStream;
import dev.kompakt.ReadOptions;
import dev.kompakt.WriteOptions;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

public class DemoJava {
    public static void main(String[] args) throws Exception {
        Path source = Path.of(args[0]);
        Path packed = Path.of(args[0] + ".java.kpk");
        byte[] data = Files.readAllBytes(source);
        WriteOptions options = WriteOptions.builder().codec("zstd:1").threads(0).build();

        long t0 = System.nanoTime();
        try (OutputStream out = KompaktOutputStream.toFile(packed, options)) {
            out.write(data);
        }
        long t1 = System.nanoTime();
        byte[] back;
        try (InputStream in = KompaktInputStream.open(packed, ReadOptions.DEFAULT)) {
            back = in.readAllBytes();
        }
        long t2 = System.nanoTime();
        System.out.printf("kompakt %s for Java: %s, %,d -> %,d bytes (%.2fx) in %.0f ms, read back in %.0f ms, identical: %b%n",
                Kompakt.version(), options, data.length, Files.size(packed), (double) data.length / Files.size(packed),
                (t1 - t0) / 1e6, (t2 - t1) / 1e6, Arrays.equals(data, back));

        try (KompaktFile file = KompaktFile.open(packed)) {
            byte[] range = new byte[64];
            long at = file.streamLength(0) / 2;
            int n = file.read(0, at, range, 0, range.length);
            System.out.printf("random access: %d bytes at %,d equal the source's: %b%n", n, at,
                    Arrays.equals(range, 0, n, data, (int) at, (int) at + n));
        }

        byte[] damaged = Files.readAllBytes(packed);
        damaged[damaged.length / 2] ^= 1;
        try {
            Kompakt.decompress(damaged);
            System.out.println("a damaged copy decoded?!");
        } catch (CorruptDataException e) {
            System.out.println("a damaged copy: " + e.getClass().getSimpleName() + ": " + e.getMessage());
        }
    }
}
