package dev.kompakt;

import java.util.Objects;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Writes a new table file from Arrow batches, atomically: the rows go to a temporary file beside
 * {@code path}, which {@link #finish()} syncs and renames into place; {@link #close()} before
 * that removes it, so a failed or abandoned write leaves no file.
 *
 * <pre>{@code
 * try (KompaktTableWriter w = KompaktTableWriter.create("prices.kpk", root.getSchema(),
 *         TableWriteOptions.builder().sortedBy("day").build())) {
 *     w.write(root);                       // as many batches as needed, of that schema
 *     w.finish();                          // the file appears, whole
 * }
 * }</pre>
 *
 * <p>Batches cross into kompakt's core through Arrow's C data interface, without copying their
 * buffers; the writer keeps no reference to them after {@link #write} returns. A
 * dictionary-encoded column needs its dictionary: pass a {@link DictionaryProvider} (a
 * {@link TableBatch} read from a table is one, and is used as such). Calls are serialized;
 * using a finished or closed writer throws a {@link KompaktUsageException}.
 */
public final class KompaktTableWriter implements AutoCloseable {
    private final NativeHandle writer;
    private final String path;
    private final DictionaryProvider dictionaries;
    private long rowsWritten;

    private KompaktTableWriter(long handle, String path, DictionaryProvider dictionaries) {
        this.writer = new NativeHandle(this, handle, Native::tableWriterFree, "table writer");
        this.path = path;
        this.dictionaries = dictionaries;
    }

    /**
     * Starts a new table file.
     *
     * @param path where the file goes (replaced by {@link #finish()} if it exists)
     * @param schema the columns of every batch
     * @param options codec, rows per group, sort keys, metadata (null: the defaults)
     * @return the writer
     * @throws InvalidOptionException if a column's type cannot be stored (naming it), or a sort
     *     key names no column
     * @throws KompaktIOException if the temporary file cannot be created
     * @throws KompaktException for other failures
     */
    public static KompaktTableWriter create(String path, Schema schema, TableWriteOptions options)
            throws KompaktException {
        return create(path, schema, options, null);
    }

    /**
     * Starts a new table file whose schema has dictionary-encoded columns.
     *
     * @param path where the file goes
     * @param schema the columns of every batch
     * @param options the options (null: the defaults)
     * @param dictionaries the dictionaries the schema's encodings name (null if none)
     * @return the writer
     * @throws KompaktException as {@link #create(String, Schema, TableWriteOptions)}
     */
    public static KompaktTableWriter create(String path, Schema schema, TableWriteOptions options,
            DictionaryProvider dictionaries) throws KompaktException {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(schema, "schema");
        TableWriteOptions o = options == null ? TableWriteOptions.defaults() : options;
        long opts = o.acquire();
        try {
            long h = TableArrow.exportSchema(schema, dictionaries, (s, unused) -> Native.tableWriterOpen(path, s, opts));
            return new KompaktTableWriter(h, path, dictionaries);
        } finally {
            o.release();
        }
    }

    /**
     * Writes a batch of the writer's schema. The batch is the caller's again when this returns
     * (what the writer keeps of it, the rows of an unfinished row group, it copies), so one root
     * can be refilled and written in a loop.
     *
     * @param batch the rows (dictionaries: those given to {@link #create}, or the batch's own if
     *     it is a {@link DictionaryProvider})
     * @throws InvalidOptionException if the batch's schema is not the writer's
     * @throws KompaktException if writing fails, or the writer is finished or closed
     */
    public void write(VectorSchemaRoot batch) throws KompaktException {
        write(batch, null);
    }

    /**
     * Writes a batch whose dictionary-encoded columns' dictionaries are in {@code dictionaries}.
     *
     * @param batch the rows
     * @param dictionaries the dictionaries (null: as {@link #write(VectorSchemaRoot)})
     * @throws KompaktException as {@link #write(VectorSchemaRoot)}
     */
    public synchronized void write(VectorSchemaRoot batch, DictionaryProvider dictionaries) throws KompaktException {
        Objects.requireNonNull(batch, "batch");
        DictionaryProvider d = dictionariesOf(batch, dictionaries != null ? dictionaries : this.dictionaries);
        long h = writer.acquire();
        try {
            rowsWritten = TableArrow.exportBatch(batch, d, (s, a) -> Native.tableWriterWrite(h, s, a));
        } finally {
            writer.release();
        }
    }

    /**
     * Rows written so far.
     *
     * @return rows
     */
    public synchronized long rowsWritten() {
        return rowsWritten;
    }

    /**
     * Ends the file, syncs it and renames it into place; the writer is then closed.
     *
     * @return the rows written
     * @throws KompaktException if writing fails (no file is left then), or the writer is finished or closed
     */
    public synchronized long finish() throws KompaktException {
        long h = writer.acquire();
        try {
            rowsWritten = Native.tableWriterFinish(h);
        } finally {
            writer.release();
            writer.close();
        }
        return rowsWritten;
    }

    /** Closes the writer; before {@link #finish()}, the file is abandoned (none is left). Idempotent. */
    @Override
    public void close() {
        writer.close();
    }

    /**
     * Appends a batch to an existing table file in place: its columns must have the table's
     * types. A crash leaves the table as it was; the new rows are there once this returns.
     *
     * @param path the table file
     * @param batch the rows (dictionaries: the batch's own if it is a {@link DictionaryProvider})
     * @param options the options to encode the new pages with (null: the defaults; sort keys
     *     and metadata stay the table's)
     * @return the rows appended
     * @throws InvalidOptionException if the batch does not fit the table
     * @throws KompaktException if the file is damaged or cannot be written
     */
    public static long append(String path, VectorSchemaRoot batch, TableWriteOptions options) throws KompaktException {
        return append(path, batch, options, null);
    }

    /**
     * {@link #append(String, VectorSchemaRoot, TableWriteOptions)} of a batch whose
     * dictionary-encoded columns' dictionaries are in {@code dictionaries}.
     *
     * @param path the table file
     * @param batch the rows
     * @param options the options (null: the defaults)
     * @param dictionaries the dictionaries (null: the batch's own, if any)
     * @return the rows appended
     * @throws KompaktException as {@link #append(String, VectorSchemaRoot, TableWriteOptions)}
     */
    public static long append(String path, VectorSchemaRoot batch, TableWriteOptions options,
            DictionaryProvider dictionaries) throws KompaktException {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(batch, "batch");
        TableWriteOptions o = options == null ? TableWriteOptions.defaults() : options;
        DictionaryProvider d = dictionariesOf(batch, dictionaries);
        long opts = o.acquire();
        try {
            return TableArrow.exportBatch(batch, d, (s, a) -> Native.tableAppend(path, s, a, opts));
        } finally {
            o.release();
        }
    }

    private static DictionaryProvider dictionariesOf(VectorSchemaRoot batch, DictionaryProvider given) {
        if (given != null) {
            return given;
        }
        return batch instanceof DictionaryProvider ? (DictionaryProvider) batch : null;
    }

    @Override
    public String toString() {
        return "KompaktTableWriter[" + path + ", " + rowsWritten + " rows" + (writer.isClosed() ? ", closed" : "")
                + "]";
    }
}
