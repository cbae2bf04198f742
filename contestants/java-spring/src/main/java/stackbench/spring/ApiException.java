package stackbench.spring;

import org.springframework.http.HttpStatus;

/** A request this server answers with {@code status} and {"error": message} (see {@link Errors}). */
final class ApiException extends RuntimeException {
    final HttpStatus status;

    ApiException(HttpStatus status, String message) {
        super(message, null, false, false);
        this.status = status;
    }
}
