package dev.toolctx.example;

import java.util.Arrays;
import java.util.List;

/** The command line, as the Node example's (examples/node-server/common.mjs). */
public final class Options {
    public int port;
    public boolean verify = true;
    public boolean contextOptional;
    public boolean tuix;
    public boolean stateless;
    public boolean exitWithStdin;
    public String record;
    public String redis;

    public static Options parse(String[] args) {
        List<String> a = Arrays.asList(args);
        Options o = new Options();
        String env = System.getenv("PORT");
        o.port = Integer.parseInt(value(a, "--port", env == null || env.isEmpty() ? "0" : env));
        o.verify = !a.contains("--no-verify");
        o.contextOptional = a.contains("--context-optional");
        o.tuix = a.contains("--tuix");
        o.stateless = a.contains("--stateless");
        o.exitWithStdin = a.contains("--exit-with-stdin");
        o.record = value(a, "--record", null);
        o.redis = value(a, "--redis", null);
        return o;
    }

    private static String value(List<String> a, String name, String otherwise) {
        int i = a.indexOf(name);
        return i >= 0 && i + 1 < a.size() ? a.get(i + 1) : otherwise;
    }
}
