package dev.kompakt;

/**
 * The data was compressed with a zstd dictionary that was not given; the message names the dictionary's id (pass it in {@link ReadOptions.Builder#dictionaries}) (kind {@link ErrorKind#DICTIONARY}).
 */
public class MissingDictionaryException extends KompaktException {
    private static final long serialVersionUID = 1L;

    /**
     * An exception with a message (kompakt's native code throws it with this constructor).
     *
     * @param message what happened
     */
    public MissingDictionaryException(String message) {
        super(ErrorKind.DICTIONARY, message);
    }

    /**
     * An exception with a message and its cause.
     *
     * @param message what happened
     * @param cause the exception that caused it
     */
    public MissingDictionaryException(String message, Throwable cause) {
        super(ErrorKind.DICTIONARY, message, cause);
    }
}
