// The memory tools' names, shared by the tools and the system note.

export const LIST = "memory_list";
export const READ = "memory_read";
export const WRITE = "memory_write";
export const DELETE = "memory_delete";
export const SEARCH = "memory_search";
