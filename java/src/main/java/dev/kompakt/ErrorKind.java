package dev.kompakt;

import java.util.Locale;

/**
 * What went wrong, one value per kind of kompakt's Rust core ({@code kompakt::ErrorKind}). Every
 * exception kompakt throws carries one, and each kind has its own exception class:
 *
 * <table>
 *   <caption>Kinds and their exceptions</caption>
 *   <tr><th>kind</th><th>exception</th><th>meaning</th></tr>
 *   <tr><td>{@link #IO}</td><td>{@link KompaktIOException}</td><td>the operating system failed a read or write</td></tr>
 *   <tr><td>{@link #CORRUPT}</td><td>{@link CorruptDataException}</td><td>the data is damaged, truncated or not kompakt's</td></tr>
 *   <tr><td>{@link #OPTION}</td><td>{@link InvalidOptionException}</td><td>an option or argument is out of range</td></tr>
 *   <tr><td>{@link #USAGE}</td><td>{@link KompaktUsageException}</td><td>a call out of order (a closed stream, a file of several streams)</td></tr>
 *   <tr><td>{@link #DICTIONARY}</td><td>{@link MissingDictionaryException}</td><td>the data needs a dictionary that was not given</td></tr>
 *   <tr><td>{@link #LIMIT}</td><td>{@link LimitExceededException}</td><td>a result would be larger than allowed</td></tr>
 *   <tr><td>{@link #STORE}</td><td>{@link KompaktStoreException}</td><td>an object store failed</td></tr>
 *   <tr><td>{@link #REFUSED}</td><td>{@link RefusedDataException}</td><td>data refused by a policy (e.g. an untrusted object)</td></tr>
 *   <tr><td>{@link #INTERNAL}</td><td>{@link KompaktInternalException}</td><td>a bug in kompakt</td></tr>
 * </table>
 */
public enum ErrorKind {
    /** The operating system failed a read or a write. */
    IO,
    /** Damaged, truncated or foreign data. */
    CORRUPT,
    /** An invalid option or argument. */
    OPTION,
    /** A call that is not allowed now (a closed object, the wrong kind of file). */
    USAGE,
    /** A zstd dictionary the data needs was not given. */
    DICTIONARY,
    /** A result larger than the limit set for it. */
    LIMIT,
    /** An object store failed. */
    STORE,
    /** Data refused by a policy. */
    REFUSED,
    /** A bug in kompakt. */
    INTERNAL;

    /**
     * The kind's name as the Rust core and the other front ends spell it: {@code "corrupt"}.
     *
     * @return the lower-case name
     */
    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * The kind of an {@link #id()}.
     *
     * @param id a lower-case name such as {@code "corrupt"}
     * @return its kind
     * @throws IllegalArgumentException if no kind has that name
     */
    public static ErrorKind fromId(String id) {
        for (ErrorKind k : values()) {
            if (k.id().equals(id)) {
                return k;
            }
        }
        throw new IllegalArgumentException("no kompakt error kind is named \"" + id + "\"");
    }
}
