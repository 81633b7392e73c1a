package dev.kompakt.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kompakt.KompaktTable;
import dev.kompakt.SortKey;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Writing kompakt tables from Spark: the four save modes, the commit protocol (a failed job
 * leaves nothing), options, sorting, empty writes, and SQL tables over a folder.
 */
class KompaktSourceWriteTest {
    static SparkSession spark;

    @TempDir
    static Path tmp;

    @BeforeAll
    static void start() throws Exception {
        spark = KompaktSourceReadTest.session(tmp, "kompakt-source-write");
    }

    @AfterAll
    static void stop() {
        if (spark != null) {
            spark.stop();
        }
    }

    static List<Path> tableFiles(Path folder) throws Exception {
        return KompaktWrite.tableFiles(folder);
    }

    static long count(Path folder) {
        return spark.read().format("kompakt").load(folder.toString()).count();
    }

    static String messages(Throwable e) {
        StringBuilder sb = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            sb.append(t.getClass().getName()).append(": ").append(t.getMessage()).append('\n');
        }
        return sb.toString();
    }

    @Test
    void saveModes() throws Exception {
        Path folder = tmp.resolve("modes");
        Dataset<Row> first = spark.range(0, 1000, 1, 3).toDF();
        // error (the default): a folder without table files is written.
        first.write().format("kompakt").save(folder.toString());
        assertEquals(1000, count(folder));
        List<Path> firstFiles = tableFiles(folder);
        assertEquals(3, firstFiles.size(), firstFiles.toString());
        assertFalse(Files.exists(folder.resolve("_temporary")), "no temporary folder after a commit");

        // error again: refused, nothing changes.
        AnalysisException e = assertThrows(AnalysisException.class,
                () -> first.write().format("kompakt").save(folder.toString()));
        assertTrue(e.getMessage().contains("already exists"), e.getMessage());
        assertEquals(firstFiles, tableFiles(folder));

        // ignore: nothing written.
        spark.range(0, 10).toDF().write().format("kompakt").mode(SaveMode.Ignore).save(folder.toString());
        assertEquals(firstFiles, tableFiles(folder));
        assertEquals(1000, count(folder));

        // append: new files beside the old.
        spark.range(1000, 1500, 1, 2).toDF().write().format("kompakt").mode("append").save(folder.toString());
        assertEquals(5, tableFiles(folder).size());
        assertEquals(1500, count(folder));
        assertEquals(1500L * 1499 / 2,
                spark.read().format("kompakt").load(folder.toString()).selectExpr("sum(id)").first().getLong(0));

        // overwrite: only the new files are left.
        spark.range(0, 7, 1, 1).toDF().write().format("kompakt").mode("overwrite").save(folder.toString());
        List<Path> now = tableFiles(folder);
        assertEquals(1, now.size(), now.toString());
        for (Path old : firstFiles) {
            assertFalse(Files.exists(old), old + " is gone");
        }
        assertEquals(7, count(folder));

        // ignore into a folder with no table files writes.
        Path fresh = tmp.resolve("modes-ignore");
        spark.range(0, 5).toDF().write().format("kompakt").mode("ignore").save(fresh.toString());
        assertEquals(5, count(fresh));

        // Appending other columns is refused, naming the column.
        Exception mismatch = assertThrows(Exception.class, () -> spark.range(3).selectExpr("cast(id as string) AS id")
                .write().format("kompakt").mode("append").save(folder.toString()));
        assertTrue(messages(mismatch).contains("\"id\""), messages(mismatch));
    }

    @Test
    void sqlTableOverAFolder() throws Exception {
        Path folder = tmp.resolve("sql");
        spark.range(0, 300, 1, 2).selectExpr("id", "concat('n', id) AS name").write().format("kompakt")
                .save(folder.toString());
        spark.sql("CREATE TABLE kompakt_sql USING kompakt LOCATION '" + folder + "'");
        try {
            Row r = spark.sql("SELECT count(*), sum(id), max(name) FROM kompakt_sql WHERE id >= 100").first();
            assertEquals(200L, r.getLong(0));
            assertEquals((100L + 299) * 200 / 2, r.getLong(1));
            assertEquals("n299", r.getString(2));
            assertEquals("id,name", String.join(",", spark.table("kompakt_sql").columns()));
        } finally {
            spark.sql("DROP TABLE kompakt_sql");
        }
        assertEquals(300, count(folder), "dropping the table leaves the files");
    }

    @Test
    void aFailedTaskLeavesNoFile() throws Exception {
        Path folder = tmp.resolve("failed");
        spark.udf().register("failOn900", (UDF1<Long, Long>) x -> {
            if (x == 900) {
                throw new IllegalStateException("task killed on purpose");
            }
            return x;
        }, DataTypes.LongType);
        Dataset<Row> df = spark.range(0, 1000, 1, 4).selectExpr("failOn900(id) AS id");
        Exception e = assertThrows(Exception.class, () -> df.write().format("kompakt").save(folder.toString()));
        assertTrue(messages(e).contains("task killed on purpose"), messages(e));
        // Tasks of the failed job may still be ending: give them a moment.
        long deadline = System.nanoTime() + 20_000_000_000L;
        List<Path> left;
        do {
            Thread.sleep(200);
            try (Stream<Path> s = Files.exists(folder) ? Files.walk(folder) : Stream.empty()) {
                left = s.filter(p -> !p.equals(folder)).collect(Collectors.toList());
            }
        } while (!left.isEmpty() && System.nanoTime() < deadline);
        assertTrue(left.isEmpty(), "nothing left in the folder: " + left);
    }

    @Test
    void optionsAndSorting() throws Exception {
        Path folder = tmp.resolve("sorted");
        spark.range(0, 20000, 1, 2).selectExpr("(id * 7919) % 20000 AS k", "id AS v").write().format("kompakt")
                .option("sortedBy", "k").option("rowsPerGroup", "1000").option("codec", "zstd:3")
                .save(folder.toString());
        List<Path> files = tableFiles(folder);
        assertEquals(2, files.size());
        long total = 0;
        for (Path f : files) {
            try (KompaktTable t = KompaktTable.open(f)) {
                assertEquals(List.of(new SortKey("k", false, false)), t.sortKeys());
                assertEquals(1000, t.rowsPerGroup());
                total += t.numRows();
            }
            List<Row> rows = spark.read().format("kompakt").load(f.toString()).collectAsList();
            for (int i = 1; i < rows.size(); i++) {
                assertTrue(rows.get(i - 1).getLong(0) <= rows.get(i).getLong(0), "sorted at row " + i + " of " + f);
            }
        }
        assertEquals(20000, total);

        Exception bad = assertThrows(Exception.class, () -> spark.range(3).write().format("kompakt")
                .option("codec", "nope").save(tmp.resolve("bad-codec").toString()));
        assertTrue(messages(bad).contains("invalid codec \"nope\""), messages(bad));
        Exception badSort = assertThrows(Exception.class, () -> spark.range(3).write().format("kompakt")
                .option("sortedBy", "nope").save(tmp.resolve("bad-sort").toString()));
        assertTrue(messages(badSort).contains("nope"), messages(badSort));
        Exception badLevel = assertThrows(Exception.class, () -> spark.range(3).write().format("kompakt")
                .option("level", "high").save(tmp.resolve("bad-level").toString()));
        assertTrue(messages(badLevel).contains("level"), messages(badLevel));
        assertFalse(Files.exists(tmp.resolve("bad-codec").resolve("_temporary")));

        Exception s3 = assertThrows(Exception.class,
                () -> spark.range(3).write().format("kompakt").save("s3://bucket/folder"));
        assertTrue(messages(s3).contains("local folders only"), messages(s3));
    }

    @Test
    void emptyWritesKeepTheSchema() throws Exception {
        Path folder = tmp.resolve("empty");
        spark.range(0, 0, 1, 2).selectExpr("id", "cast(id AS string) AS s").write().format("kompakt")
                .save(folder.toString());
        assertEquals(1, tableFiles(folder).size());
        Dataset<Row> back = spark.read().format("kompakt").load(folder.toString());
        assertEquals(0, back.count());
        assertEquals("struct<id:bigint,s:string>", back.schema().simpleString());
    }
}
