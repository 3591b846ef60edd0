/* version.h: the version of liblongpole and of the `longpole` tool (written into every
 * output that records what made it: JSON, SQLite, HTML, Chrome traces). */
#ifndef LONGPOLE_BASE_VERSION_H
#define LONGPOLE_BASE_VERSION_H

#define LONGPOLE_VERSION "0.1.0"

#endif
