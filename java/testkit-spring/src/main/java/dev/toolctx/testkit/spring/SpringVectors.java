package dev.toolctx.testkit.spring;

import dev.toolctx.example.spring.SpringServer;
import dev.toolctx.testkit.Vectors;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * scripts/java-vectors --spring: the vector runner ({@link Vectors}) against
 * examples/spring-server: Spring AI's WebMvc transport, built by
 * toolctx-spring with its context extractor, behind each case's
 * ToolctxFilter (in the place of toolctx-spring's filter registration).
 */
public final class SpringVectors {
    private SpringVectors() {}

    public static void main(String[] args) throws Exception {
        // A valid configuration for the verifier toolctx-spring still builds
        // (unused: each case brings its own): the app must start.
        String[] settings = {"--toolctx.instance-id=vectors", "--toolctx.secrets[0]=" + "v".repeat(32)};
        Vectors.run(args, (filters, extracted) -> {
            ConfigurableApplicationContext context = SpringServer.start(0, filters, extracted, settings);
            int port = Integer.parseInt(context.getEnvironment().getProperty("local.server.port"));
            return new Vectors.Started(port, () -> SpringApplication.exit(context));
        });
    }
}
