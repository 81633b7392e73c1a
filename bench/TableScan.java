import dev.kompakt.KompaktTable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The JVM side of the boundary cost in bench/spark_tables.py: a kompakt table file read whole
 * into Arrow Java through the JNI library (every column, one row group at a time, portable
 * types as Spark gets them, or the whole file at once), on {@code threads} threads, timed
 * after warm-up rounds. Prints one line per round: {@code seconds rows bytes}. Run as a
 * single-file program:
 *
 * <pre>java -cp kompakt-0.1.0.jar:$PYSPARK/jars/* bench/TableScan.java FILE ROUNDS THREADS MODE</pre>
 *
 * MODE: {@code groups} (a batch per row group, as Spark's reader asks) or {@code whole}.
 */
public class TableScan {
    public static void main(String[] args) throws Exception {
        String path = args[0];
        int rounds = Integer.parseInt(args[1]);
        int threads = Integer.parseInt(args[2]);
        boolean whole = args.length > 3 && args[3].equals("whole");
        List<Double> times = new ArrayList<>();
        try (BufferAllocator allocator = new RootAllocator()) {
            for (int round = -2; round < rounds; round++) {
                long start = System.nanoTime();
                long rows = 0;
                long bytes = 0;
                try (KompaktTable t = KompaktTable.open(path, threads)) {
                    long step = whole ? Math.max(1, t.numRows()) : Math.max(1, t.rowsPerGroup());
                    for (long from = 0; from < t.numRows(); from += step) {
                        long to = Math.min(t.numRows(), from + step);
                        try (VectorSchemaRoot batch = t.readPortable(allocator, null, from, to)) {
                            rows += batch.getRowCount();
                            for (FieldVector v : batch.getFieldVectors()) {
                                bytes += v.getBufferSize();
                            }
                        }
                    }
                }
                double seconds = (System.nanoTime() - start) / 1e9;
                if (round >= 0) {
                    times.add(seconds);
                    System.out.printf("%.6f %d %d%n", seconds, rows, bytes);
                }
            }
        }
        Collections.sort(times);
        System.err.printf("median %.4f s%n", times.get(times.size() / 2));
    }
}
