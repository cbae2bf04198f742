package stackbench.spring;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.springframework.core.env.Environment;
import org.springframework.core.env.Profiles;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.HttpRequestMethodNotSupportedException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.servlet.NoHandlerFoundException;
import org.springframework.web.servlet.resource.NoResourceFoundException;

/**
 * Every error of every route as {"error": "..."} with Content-Type
 * application/json (docs/scenarios.md): the controllers' own refusals
 * ({@link ApiException}), an unknown path (404 naming the routes), a wrong
 * method (405 with Allow) and anything unexpected (500).
 */
@RestControllerAdvice
class Errors {
    private final String routes;

    Errors(Environment env) {
        routes = env.acceptsProfiles(Profiles.of("db-read"))
                ? DbReadController.ROUTES : EventController.ROUTES;
    }

    static ResponseEntity<Map<String, String>> error(HttpStatus status, String message) {
        return ResponseEntity.status(status).contentType(MediaType.APPLICATION_JSON).body(Map.of("error", message));
    }

    @ExceptionHandler(ApiException.class)
    ResponseEntity<Map<String, String>> refused(ApiException e) {
        return error(e.status, e.getMessage());
    }

    @ExceptionHandler({NoHandlerFoundException.class, NoResourceFoundException.class})
    ResponseEntity<Map<String, String>> notFound(Exception e, jakarta.servlet.http.HttpServletRequest req) {
        return error(HttpStatus.NOT_FOUND, "no route for " + req.getMethod() + " " + req.getRequestURI()
                + "; this server answers " + routes);
    }

    @ExceptionHandler(HttpRequestMethodNotSupportedException.class)
    ResponseEntity<Map<String, String>> wrongMethod(HttpRequestMethodNotSupportedException e,
            jakarta.servlet.http.HttpServletRequest req) {
        // Spring MVC answers HEAD (and OPTIONS) for a GET mapping but leaves
        // HEAD out of the methods it reports.
        Set<HttpMethod> supported = new HashSet<>();
        if (e.getSupportedHttpMethods() != null) {
            supported.addAll(e.getSupportedHttpMethods());
        }
        supported.remove(HttpMethod.OPTIONS);
        if (supported.contains(HttpMethod.GET)) {
            supported.add(HttpMethod.HEAD);
        }
        String allow = supported.stream().map(HttpMethod::name).sorted((a, b) -> order(a) - order(b))
                .collect(Collectors.joining(", "));
        return ResponseEntity.status(HttpStatus.METHOD_NOT_ALLOWED).header(HttpHeaders.ALLOW, allow)
                .contentType(MediaType.APPLICATION_JSON)
                .body(Map.of("error", req.getRequestURI() + " does not accept " + req.getMethod() + "; allowed: " + allow));
    }

    /** GET before HEAD before the rest, as the other contestants write Allow. */
    private static int order(String method) {
        return switch (method) {
            case "GET" -> 0;
            case "HEAD" -> 1;
            default -> 2;
        };
    }

    @ExceptionHandler(Exception.class)
    ResponseEntity<Map<String, String>> failed(Exception e) {
        return error(HttpStatus.INTERNAL_SERVER_ERROR,
                "the server failed on this request: " + e + "; report it with the request that caused it");
    }
}
