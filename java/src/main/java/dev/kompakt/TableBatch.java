package dev.kompakt;

import java.util.ArrayList;
import java.util.Set;
import org.apache.arrow.c.CDataDictionaryProvider;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.DictionaryProvider;

/**
 * Rows read from a table: a {@link VectorSchemaRoot} that also holds the dictionaries of its
 * dictionary-encoded columns (stored reads return such a column as its keys, the field's
 * {@code DictionaryEncoding} naming the dictionary). Every read of {@link KompaktTable} returns
 * one. Closing it closes the columns and the dictionaries.
 *
 * <pre>{@code
 * try (VectorSchemaRoot rows = table.read(allocator, null, 0, 100)) {
 *     FieldVector city = rows.getVector("city");                      // keys
 *     DictionaryEncoding enc = city.getField().getDictionary();
 *     FieldVector names = ((DictionaryProvider) rows).lookup(enc.getId()).getVector();
 * }
 * }</pre>
 */
public final class TableBatch extends VectorSchemaRoot implements DictionaryProvider {
    private final CDataDictionaryProvider dictionaries;

    /** Takes over the columns of {@code imported} and the dictionaries. */
    TableBatch(VectorSchemaRoot imported, CDataDictionaryProvider dictionaries) {
        super(imported.getSchema(), new ArrayList<>(imported.getFieldVectors()), imported.getRowCount());
        this.dictionaries = dictionaries;
    }

    /**
     * The dictionary of a dictionary-encoded column.
     *
     * @param id the id of the column's {@code DictionaryEncoding}
     * @return the dictionary, or null if there is none with that id
     */
    @Override
    public org.apache.arrow.vector.dictionary.Dictionary lookup(long id) {
        return dictionaries.lookup(id);
    }

    /**
     * The ids of the dictionaries held.
     *
     * @return the ids, empty when no column is dictionary-encoded
     */
    @Override
    public Set<Long> getDictionaryIds() {
        return dictionaries.getDictionaryIds();
    }

    /** Closes the columns and the dictionaries. */
    @Override
    public void close() {
        try {
            super.close();
        } finally {
            dictionaries.close();
        }
    }
}
