package dev.kompakt.spark;

import dev.kompakt.InvalidOptionException;
import dev.kompakt.KompaktTable;
import dev.kompakt.KompaktTableWriter;
import dev.kompakt.SortKey;
import dev.kompakt.TableWriteOptions;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.distributions.Distribution;
import org.apache.spark.sql.connector.distributions.Distributions;
import org.apache.spark.sql.connector.expressions.Expressions;
import org.apache.spark.sql.connector.expressions.NullOrdering;
import org.apache.spark.sql.connector.expressions.SortDirection;
import org.apache.spark.sql.connector.expressions.SortOrder;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.RequiresDistributionAndOrdering;
import org.apache.spark.sql.connector.write.SupportsTruncate;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.execution.arrow.ArrowWriter;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.ArrowUtils;

/**
 * Writing table files into a local folder with Spark's commit protocol: each task writes one
 * file under {@code <folder>/_temporary/<queryId>/} (names starting with "_" are not listed by
 * reads); the driver's commit renames the committed files into the folder as
 * {@code part-<partition>-<queryId>.kpk}, deletes the old table files when overwriting (after the
 * new ones are in place), and removes {@code _temporary}. An aborted job or a failed or
 * speculative task attempt leaves no table file in the folder.
 */
final class KompaktWrite {
    /** Rows per Arrow batch handed to the table writer. */
    static final int BATCH_ROWS = 16384;
    /** Where task files wait for the job's commit. */
    static final String TEMPORARY = "_temporary";

    private KompaktWrite() {}

    /**
     * The table files directly in a folder, as reads list them: {@code *.kpk}, not starting
     * with "_" or ".".
     *
     * @param folder the folder (may not exist)
     * @return the files, sorted
     * @throws IOException if the folder cannot be listed
     */
    static List<Path> tableFiles(Path folder) throws IOException {
        List<Path> out = new ArrayList<>();
        if (!Files.isDirectory(folder)) {
            return out;
        }
        try (DirectoryStream<Path> s = Files.newDirectoryStream(folder, "*.kpk")) {
            for (Path p : s) {
                String name = p.getFileName().toString();
                if (!name.startsWith("_") && !name.startsWith(".") && Files.isRegularFile(p)) {
                    out.add(p);
                }
            }
        }
        out.sort(Comparator.naturalOrder());
        return out;
    }

    /** The write options, parsed; rebuilt into {@link TableWriteOptions} where needed. */
    static final class Settings implements Serializable {
        private static final long serialVersionUID = 1L;

        final String codec;
        final Integer level;
        final String stringCodec;
        final Integer rowsPerGroup;
        final int threads;
        final List<String> sortedBy;

        private Settings(String codec, Integer level, String stringCodec, Integer rowsPerGroup, int threads,
                List<String> sortedBy) {
            this.codec = codec;
            this.level = level;
            this.stringCodec = stringCodec;
            this.rowsPerGroup = rowsPerGroup;
            this.threads = threads;
            this.sortedBy = sortedBy;
        }

        /**
         * The settings of a write's options.
         *
         * @param options codec, level, stringCodec, rowsPerGroup, threads, sortedBy (any case)
         * @return the settings
         * @throws InvalidOptionException if a number does not parse
         */
        static Settings of(Map<String, String> options) {
            String sorted = KompaktWritableSource.option(options, "sortedBy");
            List<String> keys = new ArrayList<>();
            if (sorted != null) {
                for (String k : sorted.split(",")) {
                    if (!k.trim().isEmpty()) {
                        keys.add(k.trim());
                    }
                }
            }
            Integer threads = integer(options, "threads");
            return new Settings(KompaktWritableSource.option(options, "codec"), integer(options, "level"),
                    KompaktWritableSource.option(options, "stringCodec"), integer(options, "rowsPerGroup"),
                    threads == null ? 1 : threads, keys);
        }

        private static Integer integer(Map<String, String> options, String key) {
            String v = KompaktWritableSource.option(options, key);
            if (v == null) {
                return null;
            }
            try {
                return Integer.valueOf(v.trim());
            } catch (NumberFormatException e) {
                throw new InvalidOptionException("invalid " + key + " \"" + v + "\": an integer", e);
            }
        }

        /**
         * The table writer's options (checked by Rust).
         *
         * @return the options
         * @throws InvalidOptionException naming a bad option and its valid values
         */
        TableWriteOptions build() {
            TableWriteOptions.Builder b = TableWriteOptions.builder().threads(threads);
            if (codec != null) {
                b.codec(codec);
            }
            if (level != null) {
                b.level(level);
            }
            if (stringCodec != null) {
                b.stringCodec(stringCodec);
            }
            if (rowsPerGroup != null) {
                b.rowsPerGroup(rowsPerGroup);
            }
            if (!sortedBy.isEmpty()) {
                // Nulls last, as Spark's ordering below sorts them.
                b.sortedBy(sortedBy.stream().map(c -> new SortKey(c, false, false)).toArray(SortKey[]::new));
            }
            return b.build();
        }

        /**
         * Checks the options against the rows' schema, before any task starts.
         *
         * @param schema the rows' schema
         * @throws InvalidOptionException naming a bad option, or a sort column that does not exist
         */
        void check(StructType schema) {
            List<String> names = Arrays.asList(schema.fieldNames());
            for (String c : sortedBy) {
                if (!names.contains(c)) {
                    throw new InvalidOptionException("invalid sortedBy column \"" + c + "\": one of: "
                            + String.join(", ", names));
                }
            }
            build();
        }

        /** Spark's per-task ordering that matches the sort keys (ascending, nulls last). */
        SortOrder[] ordering() {
            return sortedBy.stream()
                    .map(c -> Expressions.sort(Expressions.column(c), SortDirection.ASCENDING, NullOrdering.NULLS_LAST))
                    .toArray(SortOrder[]::new);
        }
    }

    /** Builds the write: append, or overwrite after {@link #truncate()}. */
    static final class Builder implements WriteBuilder, SupportsTruncate {
        private final LogicalWriteInfo info;
        private final Map<String, String> options;
        private boolean truncate;

        Builder(LogicalWriteInfo info, Map<String, String> properties) {
            this.info = info;
            this.options = new HashMap<>(properties);
            this.options.putAll(info.options().asCaseSensitiveMap());
        }

        @Override
        public WriteBuilder truncate() {
            truncate = true;
            return this;
        }

        @Override
        public Write build() {
            StructType schema = info.schema();
            KompaktWritableSource.checkWrite(schema, options);
            Settings settings = Settings.of(options);
            Path folder = KompaktWritableSource.folder(options);
            try {
                if (!truncate) {
                    checkAppend(folder, schema);
                }
                Files.createDirectories(folder.resolve(TEMPORARY).resolve(info.queryId()));
            } catch (IOException e) {
                throw new UncheckedIOException("kompakt: cannot write into " + folder + ": " + e.getMessage(), e);
            }
            return new KompaktWriteJob(folder, info.queryId(), schema, settings, truncate);
        }

        /** Appended rows must have the columns of the files already there. */
        private static void checkAppend(Path folder, StructType schema) throws IOException {
            List<Path> existing = tableFiles(folder);
            if (existing.isEmpty()) {
                return;
            }
            StructType theirs;
            try (KompaktTable t = KompaktTable.open(existing.get(0).toString(), 1)) {
                theirs = KompaktTypes.toSpark(t.portableSchema(), existing.get(0).toString());
            }
            String column = KompaktTypes.firstDifference(theirs, schema);
            if (column != null) {
                throw new IllegalArgumentException("kompakt: cannot append to " + folder + ": column \"" + column
                        + "\" is " + KompaktTypes.describe(schema, column) + " in the rows and "
                        + KompaktTypes.describe(theirs, column) + " in " + existing.get(0)
                        + " (overwrite replaces the table)");
            }
        }
    }

    /** The write of one query: a batch write whose tasks Spark sorts by the sort keys first. */
    static final class KompaktWriteJob implements Write, BatchWrite, RequiresDistributionAndOrdering {
        private final Path folder;
        private final String queryId;
        private final StructType schema;
        private final Settings settings;
        private final boolean truncate;

        KompaktWriteJob(Path folder, String queryId, StructType schema, Settings settings, boolean truncate) {
            this.folder = folder;
            this.queryId = queryId;
            this.schema = schema;
            this.settings = settings;
            this.truncate = truncate;
        }

        @Override
        public String description() {
            return "kompakt " + (truncate ? "overwrite " : "append ") + folder;
        }

        @Override
        public BatchWrite toBatch() {
            return this;
        }

        @Override
        public Distribution requiredDistribution() {
            return Distributions.unspecified();
        }

        @Override
        public SortOrder[] requiredOrdering() {
            return settings.ordering();
        }

        @Override
        public DataWriterFactory createBatchWriterFactory(PhysicalWriteInfo info) {
            return new WriterFactory(folder.toString(), queryId, schema, settings);
        }

        private Path temporary() {
            return folder.resolve(TEMPORARY).resolve(queryId);
        }

        /**
         * Renames the committed task files into the folder, then (overwrite) deletes the table
         * files that were there before, then removes the temporary folder. A failed rename takes
         * back the files already renamed.
         */
        @Override
        public void commit(WriterCommitMessage[] messages) {
            try {
                List<Path> old = truncate ? tableFiles(folder) : List.of();
                List<Path> added = new ArrayList<>();
                try {
                    List<TaskFile> files = new ArrayList<>();
                    for (WriterCommitMessage m : messages) {
                        if (m instanceof TaskFile && ((TaskFile) m).file != null) {
                            files.add((TaskFile) m);
                        }
                    }
                    files.sort(Comparator.comparingInt(f -> f.partition));
                    for (TaskFile f : files) {
                        Path target = folder.resolve(String.format("part-%05d-%s.kpk", f.partition, queryId));
                        Files.move(temporary().resolve(f.file), target, StandardCopyOption.ATOMIC_MOVE);
                        added.add(target);
                    }
                    if (added.isEmpty() && (truncate || tableFiles(folder).isEmpty())) {
                        // No rows: one empty file keeps the schema, so that the folder reads back.
                        Path target = folder.resolve(String.format("part-%05d-%s.kpk", 0, queryId));
                        writeEmpty(target);
                        added.add(target);
                    }
                } catch (IOException | RuntimeException e) {
                    for (Path p : added) {
                        Files.deleteIfExists(p);
                    }
                    throw e;
                }
                for (Path p : old) {
                    Files.deleteIfExists(p);
                }
            } catch (IOException e) {
                throw new UncheckedIOException("kompakt: cannot commit the write into " + folder + ": " + e.getMessage(), e);
            } finally {
                removeTemporary();
            }
        }

        private void writeEmpty(Path target) throws IOException {
            Schema arrow = ArrowUtils.toArrowSchema(schema, "UTC", true, false);
            try (KompaktTableWriter w = KompaktTableWriter.create(target.toString(), arrow, settings.build())) {
                w.finish();
            }
        }

        @Override
        public void abort(WriterCommitMessage[] messages) {
            removeTemporary();
        }

        /** Deletes this query's temporary folder, and {@code _temporary} once empty. */
        private void removeTemporary() {
            Path tmp = temporary();
            try {
                if (Files.exists(tmp)) {
                    try (Stream<Path> s = Files.walk(tmp)) {
                        for (Path p : (Iterable<Path>) s.sorted(Comparator.reverseOrder())::iterator) {
                            Files.deleteIfExists(p);
                        }
                    }
                }
                Path parent = folder.resolve(TEMPORARY);
                try (Stream<Path> s = Files.list(parent)) {
                    if (s.findAny().isEmpty()) {
                        Files.deleteIfExists(parent);
                    }
                }
            } catch (IOException e) {
                // Another query writing into the same folder, or a file that vanished: harmless.
            }
        }
    }

    /** A task's committed file (null if it had no rows), under the query's temporary folder. */
    static final class TaskFile implements WriterCommitMessage {
        private static final long serialVersionUID = 1L;

        final int partition;
        final long taskId;
        final String file;
        final long rows;

        TaskFile(int partition, long taskId, String file, long rows) {
            this.partition = partition;
            this.taskId = taskId;
            this.file = file;
            this.rows = rows;
        }
    }

    /** Sent to the executors: makes each task's writer. */
    static final class WriterFactory implements DataWriterFactory {
        private static final long serialVersionUID = 1L;

        private final String folder;
        private final String queryId;
        private final StructType schema;
        private final Settings settings;

        WriterFactory(String folder, String queryId, StructType schema, Settings settings) {
            this.folder = folder;
            this.queryId = queryId;
            this.schema = schema;
            this.settings = settings;
        }

        @Override
        public DataWriter<InternalRow> createWriter(int partitionId, long taskId) {
            Path dir = Paths.get(folder, TEMPORARY, queryId);
            return new TaskWriter(dir, partitionId, taskId, schema, settings);
        }
    }

    /**
     * One task attempt's writer: rows into Arrow batches (Spark's own ArrowWriter, the converter
     * Spark's Arrow-based Python paths rely on, so kept working across releases), batches into a
     * table file named after the attempt, which only the driver's commit makes visible.
     */
    static final class TaskWriter implements DataWriter<InternalRow> {
        private final Path dir;
        private final int partition;
        private final long taskId;
        private final StructType schema;
        private final Settings settings;
        private final String name;

        private Schema arrow;
        private BufferAllocator allocator;
        private VectorSchemaRoot root;
        private ArrowWriter rows;
        private KompaktTableWriter writer;
        private int inBatch;

        TaskWriter(Path dir, int partition, long taskId, StructType schema, Settings settings) {
            this.dir = dir;
            this.partition = partition;
            this.taskId = taskId;
            this.schema = schema;
            this.settings = settings;
            this.name = String.format("part-%05d-%d.kpk", partition, taskId);
        }

        @Override
        public void write(InternalRow row) throws IOException {
            if (writer == null) {
                arrow = ArrowUtils.toArrowSchema(schema, "UTC", true, false);
                allocator = ArrowUtils.rootAllocator().newChildAllocator("kompakt writer " + name, 0, Long.MAX_VALUE);
                Files.createDirectories(dir);
                writer = KompaktTableWriter.create(dir.resolve(name).toString(), arrow, settings.build());
            }
            if (root == null) {
                root = VectorSchemaRoot.create(arrow, allocator);
                rows = ArrowWriter.create(root);
            }
            rows.write(row);
            if (++inBatch >= BATCH_ROWS) {
                flush();
            }
        }

        private void flush() throws IOException {
            rows.finish();
            writer.write(root);
            // The table writer copies what it keeps of a batch: the vectors are refilled.
            rows.reset();
            inBatch = 0;
        }

        @Override
        public WriterCommitMessage commit() throws IOException {
            if (writer == null) {
                return new TaskFile(partition, taskId, null, 0);
            }
            if (inBatch > 0) {
                flush();
            }
            long n = writer.finish();
            return new TaskFile(partition, taskId, name, n);
        }

        @Override
        public void abort() throws IOException {
            freeAll();
            Files.deleteIfExists(dir.resolve(name));
        }

        @Override
        public void close() {
            freeAll();
        }

        private void freeAll() {
            if (writer != null) {
                writer.close();
            }
            if (root != null) {
                root.close();
                root = null;
            }
            if (allocator != null) {
                allocator.close();
                allocator = null;
            }
        }

        @Override
        public String toString() {
            return "kompakt writer " + dir.resolve(name);
        }
    }
}
