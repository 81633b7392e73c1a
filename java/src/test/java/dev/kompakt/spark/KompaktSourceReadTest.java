package dev.kompakt.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kompakt.KompaktException;
import dev.kompakt.KompaktTable;
import dev.kompakt.RowRange;
import dev.kompakt.TableFilter;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.math.BigDecimal;
import java.net.HttpURLConnection;
import java.net.ServerSocket;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.spark.SparkException;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Reading kompakt tables in Spark: every type back value by value, row groups skipped by pushed
 * filters, splits, limits, schema checks, damaged files, and a table on an S3 server.
 */
class KompaktSourceReadTest {
    static SparkSession spark;

    @TempDir
    static Path tmp;

    /** A local[2] session for these tests, java.time values for dates and timestamps. */
    static SparkSession session(Path tmp, String name) throws Exception {
        return SparkSession.builder()
                .master("local[2]")
                .appName(name)
                .config("spark.ui.enabled", "false")
                .config("spark.driver.host", "127.0.0.1")
                .config("spark.driver.bindAddress", "127.0.0.1")
                .config("spark.sql.shuffle.partitions", "4")
                .config("spark.sql.adaptive.enabled", "false")
                .config("spark.sql.session.timeZone", "UTC")
                .config("spark.sql.datetime.java8API.enabled", "true")
                .config("spark.task.maxFailures", "1")
                .config("spark.sql.warehouse.dir", Files.createDirectories(tmp.resolve("warehouse")).toString())
                .config("spark.local.dir", Files.createDirectories(tmp.resolve("local")).toString())
                .getOrCreate();
    }

    @BeforeAll
    static void start() throws Exception {
        spark = session(tmp, "kompakt-source-read");
    }

    @AfterAll
    static void stop() {
        if (spark != null) {
            spark.stop();
        }
    }

    static Dataset<Row> read(Path p) {
        return spark.read().format("kompakt").load(p.toString());
    }

    static StructType allTypes() {
        StructType inner = new StructType().add("x", DataTypes.LongType).add("tags", DataTypes.createArrayType(DataTypes.StringType));
        return new StructType()
                .add("id", DataTypes.IntegerType, false)
                .add("b", DataTypes.ByteType).add("s", DataTypes.ShortType).add("i", DataTypes.IntegerType)
                .add("l", DataTypes.LongType).add("f", DataTypes.FloatType).add("d", DataTypes.DoubleType)
                .add("bool", DataTypes.BooleanType)
                .add("dec5", DataTypes.createDecimalType(5, 2)).add("dec18", DataTypes.createDecimalType(18, 6))
                .add("dec38", DataTypes.createDecimalType(38, 10))
                .add("day", DataTypes.DateType).add("ts", DataTypes.TimestampType).add("ntz", DataTypes.TimestampNTZType)
                .add("str", DataTypes.StringType).add("bin", DataTypes.BinaryType)
                .add("ints", DataTypes.createArrayType(DataTypes.IntegerType))
                .add("st", new StructType().add("a", DataTypes.IntegerType).add("b", DataTypes.StringType))
                .add("nested", DataTypes.createArrayType(inner))
                .add("tags", DataTypes.createMapType(DataTypes.StringType, DataTypes.LongType, true))
                .add("wait", DataTypes.createDayTimeIntervalType());
    }

    static Row allTypesRow(int id) {
        boolean n = id % 5 == 4; // a row of nulls (but the id) every fifth row
        Object[] v = {
            id,
            n ? null : (byte) (id % 256 - 128),
            n ? null : (short) (id * 31 - 20000),
            n ? null : id * 1_000_003,
            n ? null : (long) id * 1_000_000_007L - (1L << 40),
            n ? null : id == 1 ? Float.NaN : id * 0.25f - 3,
            n ? null : id == 2 ? Double.NEGATIVE_INFINITY : id * 1e-3 - 1e6,
            n ? null : id % 2 == 0,
            n ? null : new BigDecimal(id % 1000 + ".25"),
            n ? null : new BigDecimal("-" + id + "12345.123456"),
            n ? null : new BigDecimal("123456789012345678901234567" + id % 10 + ".0123456789"),
            n ? null : LocalDate.of(1900, 1, 1).plusDays(id * 97L),
            n ? null : Instant.ofEpochSecond(id * 86_401L - 1_000_000_000L, (id % 1000) * 1000L),
            n ? null : LocalDateTime.of(2024, 2, 29, 23, 59, 59).plusSeconds(id * 3601L).plusNanos(id * 1000L),
            n ? null : id % 3 == 0 ? "" : "héllo 日本 🎉 " + id,
            n ? null : new byte[] {(byte) id, 0, (byte) 255, (byte) (id >> 8)},
            n ? null : Arrays.asList(id, null, -id),
            n ? null : RowFactory.create(id % 7 == 0 ? null : id, "s" + id),
            n ? null : Arrays.asList(RowFactory.create((long) id, Arrays.asList("a", null, "ü" + id)),
                    null, RowFactory.create(null, null)),
            n ? null : tags(id),
            n ? null : java.time.Duration.ofSeconds(id * 61L - 5000, (id % 1000) * 1000L),
        };
        return RowFactory.create(v);
    }

    /** A map of 0-2 entries, one value null. */
    static Map<String, Long> tags(int id) {
        Map<String, Long> m = new java.util.LinkedHashMap<>();
        for (int j = 0; j < id % 3; j++) {
            m.put("k" + j, j == 1 ? null : (long) id * 10);
        }
        return m;
    }

    @Test
    void everyTypeRoundTrips() throws Exception {
        List<Row> rows = new ArrayList<>();
        for (int id = 0; id < 3000; id++) {
            rows.add(allTypesRow(id));
        }
        Dataset<Row> df = spark.createDataFrame(rows, allTypes()).repartition(3);
        Path folder = tmp.resolve("types");
        df.write().format("kompakt").option("rowsPerGroup", "512").save(folder.toString());

        Dataset<Row> back = read(folder);
        long directBefore = KompaktScan.DIRECT_CHUNKS.get();
        assertEquals(allTypes().fields().length, back.schema().fields().length);
        for (int c = 0; c < allTypes().fields().length; c++) {
            assertEquals(allTypes().fields()[c].dataType().catalogString(), back.schema().fields()[c].dataType().catalogString(),
                    allTypes().fields()[c].name());
        }
        List<Row> expected = spark.createDataFrame(rows, allTypes()).orderBy("id").collectAsList();
        List<Row> got = back.orderBy("id").collectAsList();
        assertEquals(expected.size(), got.size());
        String[] names = allTypes().fieldNames();
        for (int r = 0; r < expected.size(); r++) {
            for (int c = 0; c < names.length; c++) {
                Object e = expected.get(r).get(c);
                Object g = got.get(r).get(c);
                if (e instanceof byte[]) {
                    assertTrue(Arrays.equals((byte[]) e, (byte[]) g), names[c] + " of row " + r);
                } else if (e instanceof Float && ((Float) e).isNaN()) {
                    assertTrue(((Float) g).isNaN(), names[c] + " of row " + r);
                } else {
                    assertEquals(e, g, names[c] + " of row " + r);
                }
            }
        }
        // ids, bytes, shorts, ints, longs, floats, doubles, booleans, dates and both timestamps: 11 direct
        // columns per batch.
        assertTrue(KompaktScan.DIRECT_CHUNKS.get() - directBefore >= 10 * 6, "decoded into off-heap vectors");
        assertTrue(back.queryExecution().executedPlan().toString().contains("ColumnarToRow"), "a columnar scan");
        // Only some columns, and a count without any.
        assertEquals(3000, back.count());
        assertEquals(2400, back.where("i IS NOT NULL").select("i").count());
        assertEquals(KompaktScan.BYTES_LEFT_AT_CLOSE.get(), 0, "every Arrow buffer was freed");
        assertTrue(KompaktScan.READERS_CLOSED.get() > 0);

        // Year-month intervals: kompakt tables cannot hold them; the write fails naming the column.
        Dataset<Row> months = spark.range(3).selectExpr("id", "INTERVAL '1' YEAR AS m");
        Exception e = assertThrows(Exception.class,
                () -> months.write().format("kompakt").save(tmp.resolve("months").toString()));
        String message = KompaktSourceWriteTest.messages(e);
        assertTrue(message.contains("\"m\"") && message.contains("interval"), message);
        assertTrue(!Files.exists(tmp.resolve("months")) || KompaktWrite.tableFiles(tmp.resolve("months")).isEmpty());
    }

    /**
     * R's golden table (factors, dates, times, 64-bit integers, raw bytes, lists) read by Spark
     * equals its portable read in Java, value by value: the factor columns go through Spark's
     * dictionary ids, the others through off-heap or Arrow vectors.
     */
    @Test
    void dictionaryColumnsOfATableRWroteReadAsTheirValues() throws Exception {
        Path golden = dev.kompakt.TestSupport.goldenDir().resolve("v1/table/r-table.kpk");
        Path folder = Files.createDirectories(tmp.resolve("from-r"));
        Files.copy(golden, folder.resolve("r-table.kpk"));
        List<Row> got = read(folder).collectAsList();
        int factors = 0;
        try (org.apache.arrow.memory.BufferAllocator a = new org.apache.arrow.memory.RootAllocator();
                KompaktTable t = KompaktTable.open(golden.toString());
                org.apache.arrow.vector.VectorSchemaRoot want = t.readPortable(a, null, 0, t.numRows())) {
            assertEquals(want.getRowCount(), got.size());
            for (int c = 0; c < want.getFieldVectors().size(); c++) {
                org.apache.arrow.vector.FieldVector v = want.getVector(c);
                boolean factor = t.schema().getFields().get(c).getDictionary() != null;
                factors += factor ? 1 : 0;
                for (int r = 0; r < got.size(); r++) {
                    Object w = v.getObject(r);
                    Object g = got.get(r).get(c);
                    if (w == null || g == null) {
                        assertEquals(w == null, g == null, v.getName() + " row " + r);
                    } else if (factor || w instanceof org.apache.arrow.vector.util.Text) {
                        assertEquals(w.toString(), g.toString(), v.getName() + " row " + r);
                    }
                }
            }
        }
        assertTrue(factors >= 1, "the golden R table has factor columns");
        // A filter on a factor column compares its values.
        String column = null;
        try (KompaktTable t = KompaktTable.open(golden.toString())) {
            for (org.apache.arrow.vector.types.pojo.Field f : t.schema().getFields()) {
                if (f.getDictionary() != null) {
                    column = f.getName();
                    break;
                }
            }
        }
        Object first = null;
        for (Row r : got) {
            first = r.getAs(column);
            if (first != null) {
                break;
            }
        }
        final Object value = first;
        final String name = column;
        long want = got.stream().filter(r -> value.equals(r.getAs(name))).count();
        assertEquals(want, read(folder).where(org.apache.spark.sql.functions.col(name).equalTo(value)).count());
    }

    @Test
    void filtersSkipRowGroups() throws Exception {
        Path folder = tmp.resolve("sorted");
        spark.range(0, 100_000, 1, 2).selectExpr("id", "id % 13 AS m", "concat('v', id) AS s").coalesce(1)
                .write().format("kompakt").option("sortedBy", "id").option("rowsPerGroup", "1000").save(folder.toString());
        Path file = KompaktWrite.tableFiles(folder).get(0);
        long expectedGroups;
        try (KompaktTable t = KompaktTable.open(file)) {
            assertEquals(100, t.numRowGroups());
            List<RowRange> ranges = t.plan(0, t.numRows(), List.of(TableFilter.of("id", ">=", 40_000L),
                    TableFilter.of("id", "<", 41_000L)));
            expectedGroups = ranges.stream().mapToLong(r -> (r.to() - 1) / 1000 - r.from() / 1000 + 1).sum();
        }
        assertTrue(expectedGroups >= 1 && expectedGroups <= 2, "planned " + expectedGroups);

        long before = KompaktScan.ROW_GROUPS_READ.get();
        Dataset<Row> q = read(folder).where("id >= 40000 AND id < 41000");
        List<Row> got = q.collectAsList();
        long read = KompaktScan.ROW_GROUPS_READ.get() - before;
        assertEquals(expectedGroups, read, "row groups read (static counter)");
        assertEquals(expectedGroups, metric(q, KompaktScan.RowGroupsRead.NAME), "row groups read (Spark's metric)");
        String plan = q.queryExecution().executedPlan().toString();
        assertTrue(plan.contains("pushed filters") && plan.contains("GreaterThanOrEqual(id,40000)"), plan);

        List<Long> all = read(folder).collectAsList().stream().map(r -> r.getLong(0))
                .filter(id -> id >= 40000 && id < 41000).sorted().collect(Collectors.toList());
        List<Long> ids = got.stream().map(r -> r.getLong(0)).sorted().collect(Collectors.toList());
        assertEquals(all, ids);
        assertEquals(1000, ids.size());

        // Other filters give what Spark alone gives.
        Dataset<Row> local = spark.createDataFrame(read(folder).collectAsList(), read(folder).schema());
        for (String where : new String[] {"id = 77777", "id IN (5, 99999, 123456)", "id != 3 AND id < 10",
            "s = 'v500'", "m = 4 AND id > 99000", "id <= 999 OR id > 99990"}) {
            assertEquals(local.where(where).count(), read(folder).where(where).count(), where);
        }

        // Limits stop the readers early; splits follow maxPartitionBytes.
        assertEquals(7, read(folder).limit(7).collectAsList().size());
        long fileSize = Files.size(file);
        Dataset<Row> split = spark.read().format("kompakt").option("maxPartitionBytes", String.valueOf(fileSize / 10))
                .load(folder.toString());
        int partitions = split.rdd().getNumPartitions();
        assertTrue(partitions >= 9 && partitions <= 12, partitions + " partitions");
        assertEquals(100_000, split.count());
        assertEquals(99_999L * 100_000 / 2, split.selectExpr("sum(id)").first().getLong(0));
        assertEquals(0, KompaktScan.BYTES_LEFT_AT_CLOSE.get());
    }

    static long metric(Dataset<Row> q, String name) {
        long total = 0;
        for (SparkPlan p : CollectionConverters.asJava(q.queryExecution().executedPlan().collectLeaves())) {
            Option<SQLMetric> m = p.metrics().get(name);
            if (m.isDefined()) {
                total += m.get().value();
            }
        }
        return total;
    }

    @Test
    void filesMustShareASchema() throws Exception {
        Path folder = tmp.resolve("mixed");
        spark.range(5).toDF().write().format("kompakt").save(folder.resolve("a").toString());
        spark.range(5).selectExpr("cast(id AS int) AS id").write().format("kompakt").save(folder.resolve("b").toString());
        Exception e = assertThrows(Exception.class,
                () -> spark.read().format("kompakt").load(folder + "/*/*.kpk").count());
        String message = KompaktSourceWriteTest.messages(e);
        assertTrue(message.contains("\"id\"") && message.contains("/a/part-") && message.contains("/b/part-"), message);
        // Globs and several paths.
        assertEquals(5, spark.read().format("kompakt").load(folder.resolve("a").toString(),
                folder.resolve("a") + "/*.kpk").count(), "a file named twice is read once");
    }

    @Test
    void damagedFilesFailCleanly() throws Exception {
        Path folder = tmp.resolve("good");
        spark.range(0, 200_000, 1, 1).selectExpr("id", "id * 7 % 1000 AS v", "concat('row', id) AS s").write()
                .format("kompakt").option("rowsPerGroup", "20000").save(folder.toString());
        byte[] bytes = Files.readAllBytes(KompaktWrite.tableFiles(folder).get(0));

        Path truncated = Files.createDirectories(tmp.resolve("truncated"));
        Files.write(truncated.resolve("t.kpk"), Arrays.copyOf(bytes, bytes.length / 2));
        assertFailsWithKompaktCause(truncated);

        Path flipped = Files.createDirectories(tmp.resolve("flipped"));
        byte[] copy = bytes.clone();
        copy[bytes.length / 3] ^= 0x10;
        Files.write(flipped.resolve("f.kpk"), copy);
        assertFailsWithKompaktCause(flipped);
        assertEquals(200_000, read(folder).count(), "the session still works");
    }

    static void assertFailsWithKompaktCause(Path folder) {
        SparkException e = assertThrows(SparkException.class, () -> read(folder).selectExpr("sum(v)", "max(s)").collectAsList());
        boolean found = false;
        for (Throwable t = e; t != null; t = t.getCause()) {
            found |= t instanceof KompaktException;
        }
        assertTrue(found, KompaktSourceWriteTest.messages(e));
    }

    @Test
    void readsFromS3() throws Exception {
        String python = System.getenv("KOMPAKT_PYTHON_BIN");
        if (python == null || python.isEmpty()) {
            Assumptions.assumeTrue("1".equals(System.getenv("KOMPAKT_REQUIRE_INTEROP")), "KOMPAKT_PYTHON_BIN is not set");
            throw new AssertionError("KOMPAKT_PYTHON_BIN is not set and KOMPAKT_REQUIRE_INTEROP=1");
        }
        Path folder = tmp.resolve("for-s3");
        spark.range(0, 50_000, 1, 2).selectExpr("id", "concat('s', id) AS s").write().format("kompakt")
                .option("rowsPerGroup", "5000").option("sortedBy", "id").save(folder.toString());
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        String endpoint = "http://127.0.0.1:" + port;
        Process moto = new ProcessBuilder(python, "-m", "moto.server", "-H", "127.0.0.1", "-p", String.valueOf(port))
                .redirectErrorStream(true).redirectOutput(tmp.resolve("moto.log").toFile()).start();
        try {
            waitForServer(endpoint, moto);
            List<String> upload = new ArrayList<>(List.of(python, "-c", String.join("\n",
                    "import boto3, os, sys",
                    "s3 = boto3.client('s3', endpoint_url=sys.argv[1], aws_access_key_id='kompakt-test',",
                    "                  aws_secret_access_key='kompakt-test-secret', region_name='us-east-1')",
                    "s3.create_bucket(Bucket='kompakt-spark')",
                    "for f in sys.argv[2:]:",
                    "    s3.upload_file(f, 'kompakt-spark', 'events/' + os.path.basename(f))"), endpoint));
            for (Path f : KompaktWrite.tableFiles(folder)) {
                upload.add(f.toString());
            }
            assertEquals(0, run(new ProcessBuilder(upload), 120), "upload");

            // kompakt's Rust side reads the AWS settings from the process environment: a child JVM has them.
            List<String> java = new ArrayList<>();
            java.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
                if (a.startsWith("--add-opens") || a.startsWith("-XX:+IgnoreUnrecognizedVMOptions")
                        || a.startsWith("-Djdk.reflect") || a.startsWith("-Dio.netty") || a.startsWith("-Djava.io.tmpdir")) {
                    java.add(a);
                }
            }
            java.addAll(List.of("-Xmx1g", "-cp", System.getProperty("java.class.path"), KompaktS3ReadMain.class.getName(),
                    "s3://kompakt-spark/events/", tmp.resolve("child").toString()));
            ProcessBuilder child = new ProcessBuilder(java);
            Map<String, String> env = child.environment();
            env.put("AWS_ENDPOINT_URL", endpoint);
            env.put("AWS_ACCESS_KEY_ID", "kompakt-test");
            env.put("AWS_SECRET_ACCESS_KEY", "kompakt-test-secret");
            env.put("AWS_REGION", "us-east-1");
            env.put("AWS_DEFAULT_REGION", "us-east-1");
            env.put("AWS_ALLOW_HTTP", "true");
            Path out = tmp.resolve("child.log");
            child.redirectErrorStream(true).redirectOutput(out.toFile());
            int code = run(child, 300);
            String log = Files.readString(out);
            assertEquals(0, code, log);
            assertTrue(log.contains("RESULT 50000 " + (49_999L * 50_000 / 2) + " 100 s40099"), log);
        } finally {
            moto.destroy();
            if (!moto.waitFor(10, TimeUnit.SECONDS)) {
                moto.destroyForcibly();
            }
        }
    }

    static int run(ProcessBuilder pb, int seconds) throws Exception {
        Process p = pb.start();
        if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("timed out: " + pb.command().get(0));
        }
        return p.exitValue();
    }

    static void waitForServer(String endpoint, Process server) throws Exception {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (true) {
            try {
                HttpURLConnection c = (HttpURLConnection) new URL(endpoint + "/moto-api/").openConnection();
                c.setConnectTimeout(1000);
                try (InputStream in = c.getInputStream()) {
                    in.readAllBytes();
                }
                return;
            } catch (java.io.IOException e) {
                if (!server.isAlive() || System.nanoTime() > deadline) {
                    throw new AssertionError("moto did not start on " + endpoint, e);
                }
                Thread.sleep(200);
            }
        }
    }

}
