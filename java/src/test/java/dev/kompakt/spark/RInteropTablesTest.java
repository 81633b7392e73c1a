package dev.kompakt.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kompakt.TestSupport;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Date;
import java.sql.Timestamp;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Spark writes a kompakt table folder and R reads it (kompakt for R, {@code read_kpk_table}),
 * compared value by value: every Spark type R holds (integers, doubles, logicals, strings with
 * non-ASCII text, dates, timestamps, lists of integers), with nulls. R is found through
 * KOMPAKT_R_LIBRARY (scripts/test.sh sets it to the library kompakt for R was installed in);
 * without it the test is skipped, or fails under KOMPAKT_REQUIRE_INTEROP=1.
 */
class RInteropTablesTest {
    static final int ROWS = 3000;

    static SparkSession spark;

    @TempDir
    static Path tmp;

    @BeforeAll
    static void start() {
        spark = SparkSession.builder()
                .master("local[2]")
                .appName("kompakt-r-interop")
                .config("spark.ui.enabled", "false")
                .config("spark.driver.host", "127.0.0.1")
                .config("spark.driver.bindAddress", "127.0.0.1")
                .config("spark.sql.session.timeZone", "UTC")
                .config("spark.sql.shuffle.partitions", "2")
                .getOrCreate();
    }

    @AfterAll
    static void stop() {
        if (spark != null) {
            spark.stop();
        }
    }

    static Path rLibrary() {
        String lib = System.getenv("KOMPAKT_R_LIBRARY");
        if (lib == null || lib.isEmpty()) {
            if (TestSupport.REQUIRE_INTEROP) {
                fail("KOMPAKT_R_LIBRARY is not set (KOMPAKT_REQUIRE_INTEROP=1)");
            }
            Path local = Path.of("/work/main/target/R-library");
            assumeTrue(Files.isDirectory(local.resolve("kompakt")), "no KOMPAKT_R_LIBRARY");
            return local;
        }
        return Path.of(lib);
    }

    static Row row(int i) {
        boolean nulls = i % 7 == 3;
        Instant at = Instant.parse("2024-02-29T12:30:00Z").plusSeconds(37L * i).plusNanos(1000L * i);
        return RowFactory.create(
                i,
                nulls ? null : i * 0.25 - 100,
                nulls ? null : i % 2 == 0,
                nulls ? null : "ø" + i + "é".repeat(i % 3),
                nulls ? null : Date.valueOf(LocalDate.of(1969, 12, 25).plusDays(i)),
                nulls ? null : Timestamp.from(at),
                nulls ? null : (long) i * 1000 - 5,
                nulls ? null : Arrays.asList(i % 5 == 0 ? null : i, -i),
                nulls ? null : new BigDecimal(i).movePointLeft(2));
    }

    /** Row i as the R script below prints it: one line, fields separated by "|". */
    static String expected(int i) {
        Row r = row(i);
        if (r.isNullAt(1)) {
            return i + "|NA|NA|NA|NA|NA|NA|NULL|NA";
        }
        Instant instant = ((Timestamp) r.get(5)).toInstant();
        String at = String.valueOf(instant.getEpochSecond() * 1_000_000 + instant.getNano() / 1000);
        List<?> ints = (List<?>) r.get(7);
        return String.join(
                "|",
                String.valueOf(i),
                String.format(Locale.ROOT, "%.2f", r.getDouble(1)),
                r.getBoolean(2) ? "TRUE" : "FALSE",
                r.getString(3),
                r.getDate(4).toString(),
                at,
                String.valueOf(r.getLong(6)),
                (ints.get(0) == null ? "NA" : ints.get(0)) + "," + ints.get(1),
                String.format(Locale.ROOT, "%.2f", ((BigDecimal) r.get(8)).doubleValue()));
    }

    @Test
    void rReadsWhatSparkWroteValueByValue() throws Exception {
        Path lib = rLibrary();
        StructType schema = new StructType()
                .add("id", DataTypes.IntegerType, false)
                .add("x", DataTypes.DoubleType)
                .add("flag", DataTypes.BooleanType)
                .add("name", DataTypes.StringType)
                .add("day", DataTypes.DateType)
                .add("at", DataTypes.TimestampType)
                .add("big", DataTypes.LongType)
                .add("ints", DataTypes.createArrayType(DataTypes.IntegerType, true))
                .add("price", DataTypes.createDecimalType(12, 2));
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < ROWS; i++) {
            rows.add(row(i));
        }
        Path out = tmp.resolve("for-r");
        spark.createDataFrame(rows, schema).repartition(3).write().format("kompakt").save(out.toString());

        // Each file read by R, the rows put in id order and printed one line each; decimals
        // come to R as doubles, 64-bit integers that fit as integers.
        String script = String.join(
                "\n",
                "suppressMessages(library(kompakt))",
                "files <- sort(list.files(commandArgs(TRUE)[1], pattern = '[.]kpk$', full.names = TRUE))",
                "t <- do.call(rbind, lapply(files, function(f) as.data.frame(read_kpk_table(f))))",
                "t <- t[order(t$id), ]",
                "f2 <- function(v) ifelse(is.na(v), 'NA', sprintf('%.2f', as.numeric(v)))",
                // Microseconds since the epoch: exact in a double, unlike %OS6, which truncates.
                "at <- ifelse(is.na(t$at), 'NA', sprintf('%.0f', round(as.numeric(t$at) * 1e6)))",
                "ints <- vapply(t$ints, function(v) if (is.null(v)) 'NULL' else paste(ifelse(is.na(v), 'NA', v),"
                        + " collapse = ','), '')",
                "lines <- paste(t$id, f2(t$x), ifelse(is.na(t$flag), 'NA', ifelse(t$flag, 'TRUE', 'FALSE')),",
                "  ifelse(is.na(t$name), 'NA', t$name), ifelse(is.na(t$day), 'NA', format(t$day)), at,",
                "  ifelse(is.na(t$big), 'NA', sprintf('%.0f', as.numeric(t$big))), ints, f2(t$price),"
                        + " sep = '|')",
                "writeLines(enc2utf8(lines), commandArgs(TRUE)[2], useBytes = TRUE)");
        Path scriptFile = tmp.resolve("read.R");
        Files.writeString(scriptFile, script);
        Path printed = tmp.resolve("printed.txt");
        ProcessBuilder pb = new ProcessBuilder("Rscript", "--vanilla", scriptFile.toString(), out.toString(),
                printed.toString());
        pb.environment().put("R_LIBS", lib.toString());
        pb.redirectErrorStream(true);
        Path log = tmp.resolve("r.log");
        pb.redirectOutput(log.toFile());
        Process p = pb.start();
        if (!p.waitFor(300, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail("Rscript timed out");
        }
        assertEquals(0, p.exitValue(), () -> "Rscript failed:\n" + readQuietly(log));
        List<String> got = Files.readAllLines(printed);
        assertEquals(ROWS, got.size());
        for (int i = 0; i < ROWS; i++) {
            assertEquals(expected(i), got.get(i), "row " + i);
        }
    }

    static String readQuietly(Path p) {
        try {
            return Files.readString(p);
        } catch (Exception e) {
            return "(no log: " + e + ")";
        }
    }
}
