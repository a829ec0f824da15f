package dev.mcpd.delivery;

/** What one entry brings to a merged request: its body decoded, as the merge of its kind joins it. */
sealed interface MergePart permits OtlpMerge.Part, RemoteWriteMerge.Part {

    byte[] bytes();
}
