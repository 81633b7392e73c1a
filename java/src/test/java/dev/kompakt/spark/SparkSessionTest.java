package dev.kompakt.spark;

import static org.apache.spark.sql.functions.broadcast;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.count;
import static org.apache.spark.sql.functions.sum;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.MapOutputTracker$;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.scheduler.MapStatus;
import org.apache.spark.scheduler.MapStatus$;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.storage.BlockManagerId$;
import org.apache.spark.storage.StorageLevel;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import scala.Option;
import scala.Tuple2;

/**
 * A local Spark (local[2]) with kompakt as its codec for shuffles, spills, broadcasts, RDD
 * blocks and MapStatuses: queries give exactly what plain Java computes, and the codec's
 * streams were used.
 */
class SparkSessionTest {
    static final int ROWS = 200_000;
    static final String CODEC = KompaktCompressionCodec.class.getName();

    static SparkSession spark;

    @TempDir
    static Path tmp;

    @BeforeAll
    static void start() throws Exception {
        Path eventLogs = Files.createDirectories(tmp.resolve("events"));
        spark = SparkSession.builder()
                .master("local[2]")
                .appName("kompakt-test")
                .config("spark.ui.enabled", "false")
                .config("spark.driver.host", "127.0.0.1")
                .config("spark.driver.bindAddress", "127.0.0.1")
                .config("spark.sql.shuffle.partitions", "4")
                .config("spark.sql.adaptive.enabled", "false")
                .config("spark.sql.autoBroadcastJoinThreshold", "-1")
                .config("spark.io.compression.codec", CODEC)
                .config("spark.shuffle.mapStatus.compression.codec", CODEC)
                .config("spark.rdd.compress", "true")
                .config("spark.kompakt.codec", "lz4")
                .config("spark.kompakt.blockSize", "64k")
                // Many spills per map task, so that merging them reads and rewrites kompakt streams.
                .config("spark.shuffle.spill.numElementsForceSpillThreshold", "20000")
                // Event logs: Spark 4.2 takes only its own codecs there (see
                // KompaktCompressionCodecTest.whatSparkAllowsThirdPartyCodecs); this log is uncompressed.
                .config("spark.eventLog.enabled", "true")
                .config("spark.eventLog.dir", eventLogs.toUri().toString())
                .config("spark.eventLog.compress", "false")
                .config("spark.local.dir", Files.createDirectories(tmp.resolve("local")).toString())
                .getOrCreate();
    }

    @AfterAll
    static void stop() {
        if (spark != null) {
            spark.stop();
        }
    }

    @Test
    void groupByAndJoinsGiveExactResults() {
        long outputsBefore = KompaktCompressionCodec.OUTPUT_STREAMS.get();
        long inputsBefore = KompaktCompressionCodec.INPUT_STREAMS.get();
        Dataset<Row> facts = spark.range(0, ROWS, 1, 4)
                .selectExpr("id", "id % 97 AS key", "(id * 7919) % 1000 AS value", "concat('row-', id) AS label");
        // Expected values computed in plain Java.
        long[] sums = new long[97];
        long[] counts = new long[97];
        long[] labelLengths = new long[97];
        for (long id = 0; id < ROWS; id++) {
            int key = (int) (id % 97);
            sums[key] += (id * 7919) % 1000;
            counts[key]++;
            labelLengths[key] += ("row-" + id).length();
        }

        List<Row> grouped = facts.groupBy("key")
                .agg(sum("value").alias("s"), count("*").alias("n"), sum(org.apache.spark.sql.functions.length(col("label"))).alias("l"))
                .collectAsList();
        assertEquals(97, grouped.size());
        for (Row r : grouped) {
            int key = (int) r.getLong(0);
            assertEquals(sums[key], r.getLong(1), "sum of key " + key);
            assertEquals(counts[key], r.getLong(2), "count of key " + key);
            assertEquals(labelLengths[key], r.getLong(3), "label lengths of key " + key);
        }

        List<Row> dimRows = new ArrayList<>();
        for (int k = 0; k < 97; k += 2) { // even keys only: the inner join drops the odd ones
            dimRows.add(org.apache.spark.sql.RowFactory.create((long) k, k % 5));
        }
        Dataset<Row> dims = spark.createDataFrame(dimRows,
                new org.apache.spark.sql.types.StructType()
                        .add("key", org.apache.spark.sql.types.DataTypes.LongType)
                        .add("weight", org.apache.spark.sql.types.DataTypes.IntegerType));
        long[] byWeight = new long[5];
        for (int k = 0; k < 97; k += 2) {
            byWeight[k % 5] += sums[k] * (k % 5);
        }
        for (boolean broadcastDims : new boolean[] {true, false}) {
            Dataset<Row> joined = facts.join(broadcastDims ? broadcast(dims) : dims, "key")
                    .selectExpr("weight", "value * weight AS weighted")
                    .groupBy("weight").agg(sum("weighted"));
            String plan = joined.queryExecution().executedPlan().toString();
            assertTrue(plan.contains(broadcastDims ? "BroadcastHashJoin" : "SortMergeJoin"), plan);
            long[] got = new long[5];
            for (Row r : joined.collectAsList()) {
                got[r.getInt(0)] = r.getLong(1);
            }
            assertArrayEquals(byWeight, got, broadcastDims ? "broadcast join" : "shuffle join");
        }
        assertTrue(KompaktCompressionCodec.OUTPUT_STREAMS.get() > outputsBefore + 8, "shuffle and spills used kompakt");
        assertTrue(KompaktCompressionCodec.INPUT_STREAMS.get() > inputsBefore + 8, "and read it back");
    }

    @Test
    void serializedRddBlocksAndRddShuffles() {
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        List<Integer> numbers = new ArrayList<>();
        for (int i = 0; i < 100_000; i++) {
            numbers.add(i);
        }
        long before = KompaktCompressionCodec.OUTPUT_STREAMS.get();
        JavaRDD<String> words = jsc.parallelize(numbers, 4).map(i -> "word" + (i % 1000) + ":" + i);
        words.persist(StorageLevel.MEMORY_ONLY_SER());
        assertEquals(100_000, words.count());
        assertTrue(KompaktCompressionCodec.OUTPUT_STREAMS.get() >= before + 4, "the cached blocks are compressed");
        assertEquals(100_000, words.count(), "read back from the compressed cache");
        JavaPairRDD<String, Long> counts = words.mapToPair(w -> new Tuple2<>(w.substring(0, w.indexOf(':')), 1L))
                .reduceByKey(Long::sum, 6);
        Map<String, Long> result = new HashMap<>(counts.collectAsMap());
        assertEquals(1000, result.size());
        for (Long n : result.values()) {
            assertEquals(100L, n);
        }
        long total = words.map(w -> (long) Integer.parseInt(w.substring(w.indexOf(':') + 1)))
                .reduce(Long::sum);
        assertEquals(100_000L * 99_999 / 2, total);
        words.unpersist(true);
    }

    @Test
    void mapStatusesThroughKompakt() {
        SparkConf conf = spark.sparkContext().getConf();
        assertEquals(CODEC, conf.get("spark.shuffle.mapStatus.compression.codec"));
        MapStatus[] statuses = new MapStatus[50];
        for (int i = 0; i < statuses.length; i++) {
            long[] sizes = new long[300];
            for (int p = 0; p < sizes.length; p++) {
                sizes[p] = (i * 1000L + p) % 5000;
            }
            statuses[i] = MapStatus$.MODULE$.apply(
                    BlockManagerId$.MODULE$.apply("exec-" + (i % 3), "127.0.0.1", 7000 + i, Option.empty()),
                    sizes, i, 0L);
        }
        long before = KompaktCompressionCodec.OUTPUT_STREAMS.get();
        Tuple2<byte[], ?> serialized = MapOutputTracker$.MODULE$.serializeOutputStatuses(
                statuses, null, true, Integer.MAX_VALUE, conf);
        assertEquals(before + 1, KompaktCompressionCodec.OUTPUT_STREAMS.get(), "MapStatuses compressed by kompakt");
        MapStatus[] back = MapOutputTracker$.MODULE$.deserializeOutputStatuses(serialized._1(), conf);
        assertEquals(statuses.length, back.length);
        for (int i = 0; i < statuses.length; i++) {
            assertEquals(statuses[i].location(), back[i].location());
            assertEquals(statuses[i].mapId(), back[i].mapId());
            for (int p = 0; p < 300; p += 37) {
                assertEquals(statuses[i].getSizeForBlock(p), back[i].getSizeForBlock(p));
            }
        }
    }

    @Test
    void theEventLogIsWritten() throws Exception {
        spark.range(10).count();
        Path dir = tmp.resolve("events");
        List<Path> logs;
        try (java.util.stream.Stream<Path> s = Files.walk(dir)) {
            logs = s.filter(Files::isRegularFile).filter(p -> !p.getFileName().toString().startsWith("."))
                    .filter(p -> !p.getFileName().toString().startsWith("appstatus"))
                    .collect(java.util.stream.Collectors.toList());
        }
        assertEquals(1, logs.size(), logs.toString());
        String first = Files.readAllLines(logs.get(0)).get(0);
        assertTrue(first.contains("SparkListenerLogStart"), first);
    }
}
