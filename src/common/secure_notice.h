/* The one line a process started with raised privilege (AT_SECURE) prints
 * about the CALLGUARD_* variables it did not take: libcallguard's start-up
 * prints it (environment.c), and libcallguard-load's module cache (which
 * links no libcallguard) where libcallguard is not in the process. */
#ifndef CGI_SECURE_NOTICE_H
#define CGI_SECURE_NOTICE_H

/* For cgi_say (which adds "callguard: " and the newline); %s: the ignored
 * variables' names, ", "-separated. */
#define CGI_SECURE_NOTICE                                                                                              \
    "started with raised privilege (AT_SECURE): ignoring %s (variables that name a file or a library, and the "        \
    "module cache's, are not taken from the environment of a setuid, setgid or capability program)"

#endif
