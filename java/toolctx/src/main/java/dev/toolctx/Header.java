package dev.toolctx;

/** One header field line: a name and its value; a repeated header is several. */
public record Header(String name, String value) {}
