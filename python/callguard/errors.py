"""Exceptions raised by callguard.

Error        a libcallguard call failed: .status (a negative cg_status) and
             .status_name ("CG_EINVAL"), with libcallguard's one-line message.
DriverError  a driver call made by callguard failed (load_binary): .api,
             .function (the entry point), .result (the driver's code),
             .result_name ("ZE_RESULT_ERROR_MODULE_BUILD_FAILURE") and
             .build_log (the compiler's log, "" if none).
OutOfResources  a DriverError for a build that ran out of resources
             (registers, shared memory...): an autotuner skips that
             configuration and tries the next.
"""


class Error(Exception):
    def __init__(self, message, status=None, status_name=None):
        super().__init__(message)
        self.message = message
        self.status = status
        self.status_name = status_name


class DriverError(Error):
    def __init__(self, message, status=None, status_name=None, *, api=None, function=None, result=None,
                 result_name=None, build_log=""):
        super().__init__(message, status, status_name)
        self.api = api
        self.function = function
        self.result = result
        self.result_name = result_name
        self.build_log = build_log or ""

    def __str__(self):
        text = self.message
        if self.build_log:
            text += "\nbuild log:\n" + self.build_log.rstrip()
        return text


class OutOfResources(DriverError):
    pass
