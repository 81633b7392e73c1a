package dev.kompakt.spark;

import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.LargeVarBinaryVector;
import org.apache.arrow.vector.LargeVarCharVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.spark.sql.execution.vectorized.Dictionary;

/**
 * The values of a dictionary column (strings or bytes), as Spark's vectors decode dictionary
 * ids: each value's bytes made once per reader, so a row costs an array lookup (as Spark's
 * Parquet reader serves dictionary pages) instead of a string copied out of Arrow per row.
 */
final class KeyedValues implements Dictionary {
    private final byte[][] values;

    private KeyedValues(byte[][] values) {
        this.values = values;
    }

    /** Whether a dictionary column of this (portable) value type is served this way. */
    static boolean holds(ArrowType portable) {
        switch (portable.getTypeID()) {
            case Utf8:
            case LargeUtf8:
            case Binary:
            case LargeBinary:
                return true;
            default:
                return false;
        }
    }

    /**
     * The values of the dictionary a column of codes refers to.
     *
     * @param dictionaries the batch the codes came in (it holds their dictionary)
     * @param codes the column's codes
     * @return its values
     */
    static KeyedValues of(DictionaryProvider dictionaries, FieldVector codes) {
        long id = codes.getField().getDictionary().getId();
        FieldVector dict = dictionaries.lookup(id).getVector();
        byte[][] values = new byte[dict.getValueCount()][];
        for (int i = 0; i < values.length; i++) {
            values[i] = bytes(dict, i);
        }
        return new KeyedValues(values);
    }

    private static byte[] bytes(FieldVector v, int i) {
        if (v.isNull(i)) {
            return null;
        }
        if (v instanceof VarCharVector) {
            return ((VarCharVector) v).get(i);
        }
        if (v instanceof LargeVarCharVector) {
            return ((LargeVarCharVector) v).get(i);
        }
        if (v instanceof VarBinaryVector) {
            return ((VarBinaryVector) v).get(i);
        }
        if (v instanceof LargeVarBinaryVector) {
            return ((LargeVarBinaryVector) v).get(i);
        }
        throw new IllegalStateException("kompakt: a dictionary of " + v.getField().getType() + " is not of strings");
    }

    @Override
    public byte[] decodeToBinary(int id) {
        return values[id];
    }

    @Override
    public int decodeToInt(int id) {
        throw new UnsupportedOperationException("a dictionary of strings or bytes");
    }

    @Override
    public long decodeToLong(int id) {
        throw new UnsupportedOperationException("a dictionary of strings or bytes");
    }

    @Override
    public float decodeToFloat(int id) {
        throw new UnsupportedOperationException("a dictionary of strings or bytes");
    }

    @Override
    public double decodeToDouble(int id) {
        throw new UnsupportedOperationException("a dictionary of strings or bytes");
    }
}
